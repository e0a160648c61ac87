"""Tool calls in a model reply, found tolerantly; the parsing every wire format shares.

A reply is searched in this order, and the first form found wins:
1. native markup: each family module gives a ``Finder`` for its own form (Qwen's
   ``<tool_call>``, Mistral's ``[TOOL_CALLS]``, Llama's ``<|python_tag|>``); all are tried,
   the reply's own family first, so a model that slips into another family's form still works;
2. fenced blocks (```` ```tool_call ````, ```` ```json ```` or bare fences) holding a call object;
3. a reply that is just a call object (or several; one naming a known tool that is not valid
   JSON even leniently is an error, not an answer);
4. call objects inside prose (``I'll read it. {"name": ...}``).
Forms 2 to 4 count only when the object names a known tool, so an answer that merely shows
JSON is not mistaken for a call. The JSON goes through ``loads_lenient``; what cannot be read
becomes a one-line error in ``ParsedReply.errors``, never an exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.wire.jsonrepair import loads_lenient

# every fenced block, whatever its language, so that blocks pair up in order (a pattern for
# json blocks alone would pair one block's closing fence with the next block's opening)
FENCED = re.compile(r"```([\w+-]*)[ \t]*\n(.*?)```", re.DOTALL)
CALL_LANGS = ("", "json", "tool_call")
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
    unread: tuple[str, ...] = ()  # the raw text of each malformed call, so a caller can keep it


@dataclass(frozen=True)
class Found:
    """One native call block: where it is in the reply and the JSON text it carries."""

    start: int
    end: int
    body: str


# a family's native form: the call blocks in ``text``, or [] when the form is absent
Finder = Callable[[str], list[Found]]


def to_call(obj: Any, known: Collection[str] | None) -> ToolCall | str:
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


def json_values(body: str) -> list[Any]:
    """The JSON value in ``body``; several values one after another (or separated by commas or
    semicolons) are each returned. A ValueError in the list stands for text that is not JSON."""
    try:
        return [loads_lenient(body, raw_quotes=False)]
    except ValueError as e:
        error = e
    decoder = json.JSONDecoder()
    objs: list[Any] = []
    i = 0
    while i < len(body):
        if body[i].isspace() or body[i] in ",;":
            i += 1
            continue
        try:
            obj, i = decoder.raw_decode(body, i)
        except json.JSONDecodeError:
            objs = []
            break
        objs.append(obj)
    if objs:
        return objs
    try:  # one value whose strings hold raw quotes (a file's content in write_file)
        return [loads_lenient(body)]
    except ValueError:
        return [error]


def _spread(values: list[Any]) -> list[Any]:
    """A JSON list of calls ([{...}, {...}], Mistral's and OpenAI's form) counts as its items."""
    out: list[Any] = []
    for v in values:
        out.extend(v if isinstance(v, list) and v and all(isinstance(x, dict) for x in v) else [v])
    return out


def looks_like_call(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("name"), str) and (
        "arguments" in obj or "parameters" in obj
    )


def _named(obj: Any, known: Collection[str] | None) -> bool:
    return looks_like_call(obj) and (known is None or obj["name"] in known)


def _native(text: str, found: list[Found], known: Collection[str] | None) -> ParsedReply:
    calls: list[ToolCall] = []
    errors: list[str] = []
    unread: list[str] = []
    for f in found:
        body = _FENCE_STRIP.sub("", f.body.strip()).strip()
        bad = False
        for obj in _spread(json_values(body)):
            res = to_call(obj, known) if not isinstance(obj, ValueError) else f"the tool call is not valid JSON: {obj}"
            if isinstance(res, ToolCall):
                calls.append(res)
            else:
                errors.append(res)
                bad = True
        if bad:
            unread.append(text[f.start : f.end])
    content, pos = [], 0
    for f in found:
        content.append(text[pos : f.start])
        pos = f.end
    content.append(text[pos:])
    prose = "\n".join(c.strip() for c in content if c.strip())
    return ParsedReply(prose, calls, errors, tuple(unread))


def _fenced(text: str, known: Collection[str] | None) -> ParsedReply | None:
    calls: list[ToolCall] = []
    spans: list[tuple[int, int]] = []
    for m in FENCED.finditer(text):
        if m.group(1).lower() not in CALL_LANGS:
            continue
        try:
            values = _spread([loads_lenient(m.group(2))])
        except ValueError:
            continue
        found = [c for c in (to_call(v, known) for v in values if _named(v, known)) if isinstance(c, ToolCall)]
        if found and len(found) == len(values):
            calls.extend(found)
            spans.append(m.span())
    if not calls:
        return None
    content = text
    for a, b in reversed(spans):
        content = content[:a] + content[b:]
    return ParsedReply(content.strip(), calls, [])


_NAMED_START = re.compile(r'\[?\s*\{\s*"name"\s*:\s*"([\w.-]+)"')


def _bare(text: str, known: Collection[str] | None) -> ParsedReply | None:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    values = _spread(json_values(stripped))
    bad = next((v for v in values if isinstance(v, ValueError)), None)
    start = _NAMED_START.match(stripped)
    if bad is not None and start and (known is None or start.group(1) in known):
        # a reply that is a call to a known tool it could not write as JSON: an error to send
        # back, never a final answer made of raw JSON
        return ParsedReply("", [], [f"the tool call is not valid JSON: {bad}"], (stripped,))
    if not values or not all(_named(v, known) for v in values):
        return None
    calls = [c for c in (to_call(v, known) for v in values) if isinstance(c, ToolCall)]
    return ParsedReply("", calls, []) if len(calls) == len(values) else None


_CALL_START = re.compile(r'\{\s*"name"\s*:')


def embedded(text: str, known: Collection[str] | None) -> ParsedReply | None:
    """Call objects naming a known tool written inside prose (Llama's JSON after a sentence)."""
    if known is None:
        return None
    decoder = json.JSONDecoder()
    calls: list[ToolCall] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    while (m := _CALL_START.search(text, pos)) is not None:
        try:
            obj, end = decoder.raw_decode(text, m.start())
        except json.JSONDecodeError:
            pos = m.end()
            continue
        call = to_call(obj, known) if _named(obj, known) else None
        if isinstance(call, ToolCall):
            calls.append(call)
            spans.append((m.start(), end))
        pos = end
    if not calls:
        return None
    for a, b in reversed(spans):
        text = text[:a] + text[b:]
    return ParsedReply(text.strip(), calls, [])


def parse_calls(text: str, known: Collection[str] | None, finders: Sequence[Finder]) -> ParsedReply:
    """Split ``text`` into prose and tool calls; ``known`` = valid tool names (None = any)."""
    for find in finders:
        found = find(text)
        if found:
            return _native(text, found, known)
    return (_fenced(text, known) or _bare(text, known) or embedded(text, known)
            or ParsedReply(text.strip(), [], []))


def tagged_finder(tags: str) -> Finder:
    """Blocks ``<tag>...</tag>`` for the alternatives in ``tags`` (the last may be cut off)."""
    block = re.compile(rf"<({tags})>(.*?)(?:</\1>|$)", re.DOTALL)

    def find(text: str) -> list[Found]:
        return [Found(m.start(), m.end(), m.group(2)) for m in block.finditer(text)]

    return find
