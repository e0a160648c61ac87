"""Chat-template markup and stray tool calls in a model's reply.

A small model sometimes writes the template's own markers (ChatML's assistant turn start,
``<end_of_turn>``, a made-up ``<|im_assistant>``) or a tool call as bare JSON in the middle of
prose. Neither may reach the user as the final answer: markers are removed, a hallucinated
next turn (a user turn it writes itself) is cut off, and an embedded call becomes a call.
The markers of every family are app.wire's (``app.wire.visible``).
"""

from __future__ import annotations

from collections.abc import Collection

from app.agent.toolcalls import ToolCall
from app.wire.calls import embedded
from app.wire.visible import NEXT_TURN as _NEXT_TURN  # every family's markers live in app.wire
from app.wire.visible import STRAY_MARKERS as _MARKERS


def strip_markup(text: str) -> str:
    """``text`` without chat-template markers, cut where a made-up next turn starts."""
    m = _NEXT_TURN.search(text)
    if m:
        text = text[: m.start()]
    return _MARKERS.sub("", text).strip()


def has_markup(text: str) -> bool:
    return bool(_NEXT_TURN.search(text) or _MARKERS.search(text))


def embedded_calls(text: str, known: Collection[str]) -> tuple[str, list[ToolCall]]:
    """Tool calls written as bare JSON objects inside prose (``{"name": "edit_file",
    "arguments": {...}}``), naming known tools; returns the prose without them and the calls."""
    found = embedded(text, known)
    return (text.strip(), []) if found is None else (found.content, list(found.calls))
