"""Model families' wire formats: one module per family, one place the app asks.

``wire_for(engine.info)`` gives the model's ``Wire`` (rendering, tool-call text and parsing,
stop strings, visible text); ``parse_reply`` parses with every family's forms; ``visible_text``
and ``VisibleStream`` are what front ends show. Importing this package registers the family
renderers with the engine (engine.chat_template.use_formats), which may not import the app.
"""

from __future__ import annotations

from app.wire.base import Wire
from app.wire.calls import FENCED, ParsedReply, ToolCall
from app.wire.registry import FAMILIES, GENERIC, by_name, wire_for
from app.wire.stream import CallFilter
from app.wire.visible import VisibleStream, split_thinking, visible_text
from engine.chat_template import use_formats

use_formats(wire_for)


def parse_reply(text: str, known=None, wire: Wire | None = None) -> ParsedReply:
    """Prose and tool calls of ``text`` in any family's form (``wire``'s own form first)."""
    return (wire or GENERIC).parse(text, known)


__all__ = [
    "FAMILIES", "FENCED", "GENERIC", "CallFilter", "ParsedReply", "ToolCall", "VisibleStream", "Wire",
    "by_name", "parse_reply", "split_thinking", "visible_text", "wire_for",
]
