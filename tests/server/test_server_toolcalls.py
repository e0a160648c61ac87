"""Qwen <tool_call> blocks -> OpenAI tool_calls, on finished text and on a stream."""

from __future__ import annotations

import json

import pytest

from app.server.toolcalls import ToolCallFilter, parse_tool_calls

ONE = 'Checking.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>'
TWO = ONE + '\n<tool_call>\n{"name": "shell", "arguments": "{\\"cmd\\": \\"ls\\"}"}\n</tool_call>\nDone.'


def test_plain_text_has_no_calls():
    assert parse_tool_calls("just text, a < b") == ("just text, a < b", [])


def test_one_call():
    content, calls = parse_tool_calls(ONE)
    assert content == "Checking."
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("read_file", {"path": "a.py"})]
    assert calls[0].to_openai()["type"] == "function" and "index" not in calls[0].to_openai()
    assert calls[0].to_openai(0)["index"] == 0


def test_two_calls_string_arguments_and_trailing_text():
    content, calls = parse_tool_calls(TWO)
    assert [c.name for c in calls] == ["read_file", "shell"]
    assert calls[1].arguments == '{"cmd": "ls"}'  # already a JSON string: kept as is
    assert content == "Checking.\nDone."


def test_unterminated_call_at_the_end_still_parses():
    _, calls = parse_tool_calls('<tool_call>\n{"name": "ls", "arguments": {}}')
    assert [c.name for c in calls] == ["ls"] and calls[0].arguments == "{}"


def test_bad_json_stays_content():
    text = "<tool_call>\n{not json}\n</tool_call>"
    assert parse_tool_calls(text) == (text, [])
    assert parse_tool_calls('<tool_call>{"arguments": {}}</tool_call>')[1] == []  # no name


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 11, 1000])
def test_filter_never_leaks_markup_whatever_the_chunking(size):
    f = ToolCallFilter()
    shown = "".join(f.feed(TWO[i : i + size]) for i in range(0, len(TWO), size))
    rest, calls = f.finish()
    assert "<" not in shown and shown == "Checking.\n"
    assert [c.name for c in calls] == ["read_file", "shell"]
    assert rest.strip() == "Done."


@pytest.mark.parametrize("size", [1, 3, 4])
def test_filter_passes_text_that_only_looks_like_a_tag(size):
    text = "if a <tool and b <tool_cal: x < y\n"
    f = ToolCallFilter()
    shown = "".join(f.feed(text[i : i + size]) for i in range(0, len(text), size))
    rest, calls = f.finish()
    assert shown + rest == text and calls == []


def test_filter_with_unparseable_block_returns_it_as_content():
    f = ToolCallFilter()
    shown = f.feed("ok <tool_call> nope </tool_call>")
    rest, calls = f.finish()
    assert calls == [] and shown + rest == "ok <tool_call> nope </tool_call>"
