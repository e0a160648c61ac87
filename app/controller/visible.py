"""The part of a (streamed) assistant reply a person should see: without tool-call markup.

Every front end goes through :func:`visible_text`, so they hide the same things; what is
hidden (every model family's calls, thinking and template markup) is app.wire's to say.
"""

from __future__ import annotations

from app.wire.visible import split_thinking
from app.wire.visible import visible_text as _wire_visible


def visible_text(raw: str) -> str:
    """Assistant text without (possibly partial) tool calls, thinking and template markup.
    The final AssistantMessage replaces the streamed text anyway."""
    return _wire_visible(raw, partial=True)


def thinking_of(raw: str) -> str:
    """The reply's thinking (Qwen3's ``<think>`` block), for a front end that folds it away."""
    return split_thinking(raw)[0]
