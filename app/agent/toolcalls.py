"""Find tool calls in a model reply, tolerantly.

Accepted forms, in order of preference:
1. Qwen's native ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (several allowed,
   the last one may be cut off);
2. fenced ```json blocks holding such an object;
3. a reply that is just such a bare JSON object.
Forms 2 and 3 count only when the object names a known tool, so an answer that merely shows
JSON is not mistaken for a call. The JSON itself goes through ``loads_lenient``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from app.agent.jsonrepair import loads_lenient

_TAGS = "tool_call|function_call|tools"
_TAGGED = re.compile(rf"<({_TAGS})>(.*?)(?:</\1>|$)", re.DOTALL)
_OPEN = re.compile(rf"<(?:{_TAGS})>")
# every fenced block, whatever its language, so that blocks pair up in order (a pattern for
# json blocks alone would pair one block's closing fence with the next block's opening)
FENCED = re.compile(r"```([\w+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_CALL_LANGS = ("", "json", "tool_call")
_FENCE_STRIP = re.compile(r"^\s*```[a-zA-Z_]*\s*\n?|\n?\s*```\s*$")


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ParsedReply:
    content: str  # the reply with tool-call markup removed
    calls: list[ToolCall] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # one line per malformed call


def _to_call(obj: Any, known: Collection[str] | None) -> ToolCall | str:
    """A ToolCall, or a one-line error saying what is wrong with ``obj``."""
    if isinstance(obj, list) and len(obj) == 1:
        obj = obj[0]
    if not isinstance(obj, dict):
        return "the tool call must be a JSON object with \"name\" and \"arguments\""
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name")
    args = obj.get("arguments", obj.get("parameters", {}))
    if not isinstance(name, str) or not name:
        return "the tool call has no \"name\""
    if isinstance(args, str):
        try:
            args = loads_lenient(args) if args.strip() else {}
        except ValueError:
            return f"the arguments of {name} are not a JSON object"
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return f"the arguments of {name} must be a JSON object"
    if known is not None and name not in known:
        return f"unknown tool {name!r}; available tools: {', '.join(sorted(known))}"
    return ToolCall(name, args)


def _json_objects(body: str) -> list[Any]:
    """The JSON value in ``body``; several objects one after another are each returned.
    A ValueError in the list stands for text that is not JSON even after repair."""
    try:
        return [loads_lenient(body)]
    except ValueError as e:
        error = e
    decoder = json.JSONDecoder()
    objs: list[Any] = []
    i = 0
    while i < len(body):
        if body[i].isspace() or body[i] == ",":
            i += 1
            continue
        try:
            obj, i = decoder.raw_decode(body, i)
        except json.JSONDecodeError:
            return [error]
        objs.append(obj)
    return objs or [error]


def _looks_like_call(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("name"), str) and (
        "arguments" in obj or "parameters" in obj
    )


def parse_reply(text: str, known: Collection[str] | None = None) -> ParsedReply:
    """Split ``text`` into prose and tool calls; ``known`` = valid tool names (None = any)."""
    calls: list[ToolCall] = []
    errors: list[str] = []
    if _OPEN.search(text):
        for m in _TAGGED.finditer(text):
            body = _FENCE_STRIP.sub("", m.group(2).strip()).strip()
            for obj in _json_objects(body):
                res = _to_call(obj, known) if not isinstance(obj, ValueError) else (
                    f"the tool call is not valid JSON: {obj}")
                (calls.append(res) if isinstance(res, ToolCall) else errors.append(res))
        content = _TAGGED.sub("", text).strip()
        return ParsedReply(content, calls, errors)
    # fenced JSON blocks naming a tool
    spans: list[tuple[int, int]] = []
    for m in FENCED.finditer(text):
        if m.group(1).lower() not in _CALL_LANGS:
            continue
        try:
            obj = loads_lenient(m.group(2))
        except ValueError:
            continue
        if _looks_like_call(obj) and (known is None or obj["name"] in known):
            res = _to_call(obj, known)
            if isinstance(res, ToolCall):
                calls.append(res)
                spans.append(m.span())
    if calls:
        content = text
        for a, b in reversed(spans):
            content = content[:a] + content[b:]
        return ParsedReply(content.strip(), calls, errors)
    # a bare JSON object as the whole reply
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            obj = loads_lenient(stripped)
        except ValueError:
            obj = None
        if _looks_like_call(obj) and (known is None or obj["name"] in known):
            res = _to_call(obj, known)
            if isinstance(res, ToolCall):
                return ParsedReply("", [res], [])
    return ParsedReply(text.strip(), [], [])
