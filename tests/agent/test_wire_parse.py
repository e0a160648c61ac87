"""app.wire's parsers: every family's native call form, fenced and bare JSON, malformed input,
the server and the agent accepting the same forms, and what a front end shows."""

from __future__ import annotations

import json

import pytest

from app.server.toolcalls import ToolCallFilter, parse_tool_calls
from app.wire import FAMILIES, GENERIC, VisibleStream, parse_reply, split_thinking, visible_text
from app.wire.calls import ToolCall
from app.wire.chatml import QWEN3, QWEN25
from app.wire.gemma import GEMMA
from app.wire.llama3 import LLAMA3
from app.wire.mistral import MISTRAL

KNOWN = {"read_file", "edit_file", "shell"}
READ = ToolCall("read_file", {"path": "a.py"})
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in sorted(KNOWN)]

# one call to read_file in each form a model of some family writes it
FORMS = {
    "qwen": 'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>',
    "mistral-v3": 'Let me look.[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a.py"}}]',
    "mistral-v11": 'Let me look.[TOOL_CALLS]read_file[ARGS]{"path": "a.py"}',
    "llama-python-tag": 'Let me look.<|python_tag|>{"name": "read_file", "parameters": {"path": "a.py"}}<|eom_id|>',
    "llama-bare": '{"name": "read_file", "parameters": {"path": "a.py"}}',
    "fenced": 'Let me look.\n```tool_call\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```',
    "fenced-json": 'Let me look.\n```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```',
    "bare-list": '[{"name": "read_file", "arguments": {"path": "a.py"}}]',
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_reads_every_form(family, form):
    r = FAMILIES[family].parse(FORMS[form], KNOWN)
    assert r.calls == [READ] and r.errors == []
    assert r.content in ("", "Let me look.")


@pytest.mark.parametrize("form", sorted(FORMS))
def test_server_accepts_the_forms_the_agent_accepts(form):
    content, calls = parse_tool_calls(FORMS[form], TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("read_file", {"path": "a.py"})]
    assert content in ("", "Let me look.")


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("size", [1, 3, 8, 1000])
def test_server_stream_never_shows_a_call_in_any_form(form, size):
    text = FORMS[form]
    f = ToolCallFilter(TOOLS)
    shown = "".join(f.feed(text[i : i + size]) for i in range(0, len(text), size))
    rest, calls = f.finish()
    assert [c.name for c in calls] == ["read_file"]
    assert "read_file" not in shown + rest and (shown + rest).strip() in ("", "Let me look.")


def test_own_form_of_each_family_round_trips():
    for wire in (QWEN25, QWEN3, LLAMA3, GEMMA, MISTRAL, GENERIC):
        text = wire.call_text("edit_file", {"path": "x.py", "search": "a", "replace": "b"})
        assert wire.parse(text, KNOWN).calls == [ToolCall("edit_file", {"path": "x.py", "search": "a", "replace": "b"})]


def test_several_calls_in_one_reply():
    two = LLAMA3.call_text("read_file", {"path": "a.py"}) + "; " + LLAMA3.call_text("shell", {"command": "ls"})
    assert [c.name for c in parse_reply(two, KNOWN).calls] == ["read_file", "shell"]
    mistral = '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a.py"}}, {"name": "shell", "arguments": {"command": "ls"}}]'
    assert [c.name for c in MISTRAL.parse(mistral, KNOWN).calls] == ["read_file", "shell"]


@pytest.mark.parametrize("text, error", [
    ("<tool_call>\nread_file(path='a.py')\n</tool_call>", "not valid JSON"),
    ('[TOOL_CALLS]read_file[ARGS]{"path": ', "not valid JSON"),
    ("[TOOL_CALLS] not json at all", "not valid JSON"),
    ('<|python_tag|>{"name": "nope", "parameters": {}}', "unknown tool 'nope'"),
    ('<tool_call>{"name": "shell", "arguments": [1]}</tool_call>', "must be a JSON object"),
    ('[TOOL_CALLS][{"arguments": {}}]', 'no "name"'),
])
def test_malformed_native_calls_are_one_line_errors(text, error):
    r = parse_reply(text, KNOWN)
    assert r.calls == [] and len(r.errors) == 1 and error in r.errors[0] and "\n" not in r.errors[0]
    content, calls = parse_tool_calls(text, TOOLS)
    assert calls == [] and content == text  # the server keeps what it cannot read


def test_json_that_names_no_tool_is_an_answer():
    for text in ('{"name": "tau", "version": 1}', '```json\n{"name": "tau", "arguments": []}\n```',
                 '[{"name": "x", "arguments": {}}]', "[1, 2, 3]"):
        r = parse_reply(text, KNOWN)
        assert r.calls == [] and r.errors == [] and r.content


def test_visible_text_hides_calls_thinking_and_markup_of_every_family():
    assert visible_text("<think>\nplan it\n</think>\nThe answer.") == "The answer."
    assert split_thinking("plan it</think>The answer.") == ("plan it", "The answer.")  # template opened <think>
    assert visible_text("<|im_start|>assistant\nDone.<|im_end|>") == "Done."
    assert visible_text("Done.<|eot_id|>") == "Done."
    assert visible_text("<start_of_turn>model\nDone.<end_of_turn>") == "Done."
    assert visible_text("Done.[TOOL_CALLS][{\"name\": \"shell\"") == "Done."
    assert visible_text('```python\nx = {"name": 1}\n```') == '```python\nx = {"name": 1}\n```'
    assert visible_text('{"name": "tau", "version": 1}') == '{"name": "tau", "version": 1}'  # JSON answer stays
    for form, text in FORMS.items():
        assert visible_text(text) in ("", "Let me look."), form


@pytest.mark.parametrize("form", sorted(FORMS))
def test_streamed_visible_text_never_prints_markup(form):
    s = VisibleStream()
    printed = "".join(s.feed(ch) for ch in FORMS[form] + "\nok")
    assert "read_file" not in printed and not any(m in printed for m in ("<tool", "<|", "[TOOL", "```"))
    assert printed.replace("\n", "") in ("", "ok", "Let me look.", "Let me look.ok")


def test_a_call_object_inside_prose_counts_when_it_names_a_tool():
    r = LLAMA3.parse('I will read it.\n{"name": "read_file", "parameters": {"path": "a.py"}}\nThen fix it.', KNOWN)
    assert r.calls == [READ] and r.content == "I will read it.\n\nThen fix it."
    assert parse_reply('Use {"name": "tau", "arguments": {}} in the config.', KNOWN).calls == []


def test_a_made_up_next_turn_and_made_up_markers_never_show():
    assert visible_text("Fixed it.<|im_end|>\n<|im_start|>user\nthanks<|im_end|>") == "Fixed it."
    assert visible_text("<|im_assistant>Here it is.") == "Here it is."  # what a Gemma model wrote given ChatML
    assert visible_text("Done.<end_of_turn>\n<start_of_turn>user\nmore") == "Done."
    assert GEMMA.parse("Done.<end_of_turn>\n<start_of_turn>user\nmore", KNOWN).content == "Done."
