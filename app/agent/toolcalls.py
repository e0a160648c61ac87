"""Tool calls in a model reply: the agent's names for the parser in ``app.wire``.

Every family's call forms are parsed by ``app.wire.calls``; ``parse_reply`` accepts all of
them (the agent passes its model's wire format, so that family's own form is tried first).
"""

from __future__ import annotations

from app.wire import FENCED, ParsedReply, ToolCall, parse_reply

__all__ = ["FENCED", "ParsedReply", "ToolCall", "parse_reply"]
