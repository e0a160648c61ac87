import pytest

from app.agent.jsonrepair import loads_lenient
from app.agent.toolcalls import ToolCall, parse_reply

KNOWN = {"read_file", "edit_file", "shell"}


def test_native_qwen_calls_several_per_message():
    text = (
        "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}\n</tool_call>\n"
        "<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": \"pytest -q\"}}\n</tool_call>"
    )
    r = parse_reply(text, KNOWN)
    assert r.calls == [ToolCall("read_file", {"path": "a.py"}), ToolCall("shell", {"command": "pytest -q"})]
    assert r.errors == [] and r.content == "Let me look."


@pytest.mark.parametrize(
    "body",
    [
        "{'name': 'read_file', 'arguments': {'path': 'a.py'}}",  # single quotes
        '{"name": "read_file", "arguments": {"path": "a.py"},}',  # trailing comma
        '{"name": "read_file", "arguments": {"path": "a.py"',  # missing closers
        '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```',  # fenced inside the tags
        '{"function": {"name": "read_file", "arguments": "{\\"path\\": \\"a.py\\"}"}}',  # OpenAI-ish, string args
    ],
)
def test_tagged_calls_are_repaired(body):
    r = parse_reply(f"<tool_call>\n{body}\n</tool_call>", KNOWN)
    assert r.errors == []
    assert r.calls == [ToolCall("read_file", {"path": "a.py"})]


def test_truncated_last_call_without_closing_tag():
    r = parse_reply('<tool_call>\n{"name": "shell", "arguments": {"command": "ls", "check": True', KNOWN)
    assert r.calls == [ToolCall("shell", {"command": "ls", "check": True})]


def test_fenced_json_and_bare_object_count_only_for_known_tools():
    fenced = 'I will read it.\n```json\n{"name": "read_file", "arguments": {"path": "x"}}\n```\n'
    r = parse_reply(fenced, KNOWN)
    assert r.calls == [ToolCall("read_file", {"path": "x"})] and r.content == "I will read it."
    bare = parse_reply('{"name": "edit_file", "arguments": {"path": "x", "search": "a", "replace": "b"}}', KNOWN)
    assert bare.calls[0].name == "edit_file"
    # JSON that merely looks like data is an answer, not a call
    answer = 'The config is:\n```json\n{"name": "tau", "arguments": []}\n```'
    assert parse_reply(answer, KNOWN).calls == []
    assert parse_reply('{"name": "x", "version": 1}', KNOWN).calls == []


def test_fenced_calls_after_a_code_block_pair_their_fences():
    # what Qwen2.5-Coder-1.5B wrote in a tau run: a python block, then the calls as json blocks
    text = (
        "The bug is in add. Here's the corrected code:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n"
        "To apply it:\n\n```json\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"calc.py\", "
        "\"search\": \"    return a - b\", \"replace\": \"    return a + b\"}}\n```\n\nThen:\n\n"
        "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"pytest -q\"}}\n```"
    )
    r = parse_reply(text, KNOWN)
    assert [c.name for c in r.calls] == ["edit_file", "shell"]
    assert r.calls[0].arguments["search"] == "    return a - b"
    assert "```python" in r.content and "edit_file" not in r.content


def test_malformed_calls_report_errors():
    r = parse_reply("<tool_call>\nread_file(path='a.py')\n</tool_call>", KNOWN)
    assert r.calls == [] and "not valid JSON" in r.errors[0]
    r = parse_reply('<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>', KNOWN)
    assert "unknown tool 'delete_everything'" in r.errors[0] and "read_file" in r.errors[0]
    r = parse_reply('<tool_call>{"arguments": {}}</tool_call>', KNOWN)
    assert 'no "name"' in r.errors[0]
    r = parse_reply('<tool_call>{"name": "shell", "arguments": [1]}</tool_call>', KNOWN)
    assert "must be a JSON object" in r.errors[0]


def test_plain_answer_has_no_calls():
    r = parse_reply("Done: I renamed the function and the tests pass.", KNOWN)
    assert r.calls == [] and r.errors == [] and r.content.startswith("Done")


def test_loads_lenient_repairs_and_rejects():
    assert loads_lenient("{'a': True, 'b': None, 'c': False,}") == {"a": True, "b": None, "c": False}
    assert loads_lenient('{"s": "it\'s \\"quoted\\" True"}') == {"s": 'it\'s "quoted" True'}
    assert loads_lenient('{"code": "line1\nline2"}') == {"code": "line1\nline2"}
    assert loads_lenient('{"a": [1, {"b": 2') == {"a": [1, {"b": 2}]}
    with pytest.raises(ValueError):
        loads_lenient("not json at all")


def test_tag_variants_and_several_objects_in_one_tag():
    r = parse_reply('<function_call>{"name": "shell", "arguments": {"command": "ls"}}</function_call>', KNOWN)
    assert r.calls == [ToolCall("shell", {"command": "ls"})] and r.content == ""
    two = '<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n{"name": "read_file", "arguments": {"path": "b"}}\n</tool_call>'
    r = parse_reply(two, KNOWN)
    assert [c.arguments["path"] for c in r.calls] == ["a", "b"] and r.errors == []


def test_loads_lenient_reads_quotes_written_raw_inside_a_files_content():
    content = 'def f(d):\n    """Doc."""\n    x = d["key"]\n    print(f"{x}", "a")\n    return {"a": 1, "b": 2}\n'
    raw = '{"path": "f.py", "content": "' + content + '"}'
    assert loads_lenient(raw) == {"path": "f.py", "content": content}
    with pytest.raises(ValueError):
        loads_lenient(raw, raw_quotes=False)
