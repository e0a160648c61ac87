"""Tool calls in generated text -> OpenAI ``tool_calls``, parsed by the agent's own parser.

The server accepts exactly the call forms the in-process agent accepts (``app.wire``: every
family's native markup, fenced JSON, a bare JSON reply); fenced and bare forms count only
when they name one of the request's tools. ``parse_tool_calls`` works on a finished text,
``ToolCallFilter`` on a stream (``app.wire.CallFilter``), so a client never sees call markup.
A call that cannot be read stays in the content, so nothing the model wrote is lost.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from app.wire import GENERIC, CallFilter, Wire
from app.wire import ToolCall as WireCall
from app.wire.base import arguments_json


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as OpenAI sends it

    def to_openai(self, index: int | None = None) -> dict:
        d: dict = {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}
        if index is not None:
            d["index"] = index
        return d


def new_call_id() -> str:
    return "call_" + uuid.uuid4().hex[:24]


def tool_names(tools: Sequence[dict] | None) -> set[str] | None:
    """The function names a request offers (None: no tools given, any name goes)."""
    if not tools:
        return None
    return {str((t.get("function") or t).get("name")) for t in tools if isinstance(t, dict)}


def _openai(calls: Sequence[WireCall]) -> list[ToolCall]:
    return [ToolCall(new_call_id(), c.name, arguments_json(c.arguments)) for c in calls]


def parse_tool_calls(text: str, tools: Sequence[dict] | None = None,
                     wire: Wire = GENERIC) -> tuple[str, list[ToolCall]]:
    """Split generated text into (content without the tool calls, calls)."""
    parsed = wire.parse(text, tool_names(tools))
    if not parsed.calls:
        return text, []
    return "\n".join(x for x in (parsed.content, *parsed.unread) if x), _openai(parsed.calls)


class ToolCallFilter:
    """Streaming side of :func:`parse_tool_calls`: ``feed(delta)`` returns the content that is
    safe to show now; ``finish()`` the remaining content and the parsed calls."""

    def __init__(self, tools: Sequence[dict] | None = None, wire: Wire = GENERIC) -> None:
        self._filter = CallFilter(wire, tool_names(tools))

    @property
    def emitted(self) -> list[str]:
        return self._filter.emitted

    def feed(self, delta: str) -> str:
        return self._filter.feed(delta)

    def finish(self) -> tuple[str, list[ToolCall]]:
        rest, calls = self._filter.finish()
        return rest, _openai(calls)
