"""The conversation as the TUI shows it: agent events turned into widgets (app thread only)."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from app.controller.visible import thinking_of, visible_text
from app.events import ToolCallEvent, ToolResultEvent
from app.tui.cards import ToolCard
from app.tui.widgets import AssistantView, Conversation, NoticeLine, UserMessage


class Transcript:
    """Streams the reply into an AssistantView, shows tool calls as cards, and notices."""

    def __init__(self, box: Conversation) -> None:
        self.box = box
        self.current: AssistantView | None = None  # the reply being streamed
        self.cards: dict[str, ToolCard] = {}

    def mount(self, widget: Widget) -> None:
        self.box.mount(widget)

    def notice(self, text: str, kind: str = "") -> NoticeLine:
        line = NoticeLine(Text(text), kind)
        self.mount(line)
        return line

    def user(self, text: str) -> None:
        self.mount(UserMessage(text))

    def clear(self) -> None:
        self.box.remove_children()
        self.cards.clear()
        self.current = None

    def delta(self, text: str) -> None:
        if self.current is None or self.current.final:
            self.current = AssistantView()
            self.mount(self.current)
        self.current.append_raw(text)

    def message(self, content: str) -> None:
        """The reply is complete: its final text replaces what was streamed."""
        view = self.current
        thought = thinking_of(content) or (thinking_of(view.raw) if view is not None else "")
        if view is None and content.strip():
            view = AssistantView()
            self.mount(view)
        if view is not None:
            view.raw = content
            self._finish(view, thought)
        self.current = None

    def close_stream(self) -> None:
        if self.current is not None:
            self._finish(self.current, thinking_of(self.current.raw))
            self.current = None

    def _finish(self, view: AssistantView, thought: str = "") -> None:
        if thought:  # Qwen3's thinking: folded above the answer, opened on a click
            lines = thought.count("\n") + 1
            fold = Collapsible(Static(Text(thought), classes="thought"), title=f"thinking ({lines} line{'s' * (lines > 1)})",
                               collapsed=True, classes="thinking")
            self.box.mount(fold, before=view)
        view.final = True
        if not visible_text(view.raw):
            view.remove()
        else:
            self.box.call_next(view.flush)

    def tool_call(self, ev: ToolCallEvent) -> None:
        self.close_stream()
        card = ToolCard(ev.call_id, ev.name, dict(ev.arguments))
        self.cards[ev.call_id] = card
        self.mount(card)

    def tool_result(self, ev: ToolResultEvent) -> None:
        card = self.cards.get(ev.call_id)
        if card is None:
            card = ToolCard(ev.call_id, ev.name, {})
            self.cards[ev.call_id] = card
            self.mount(card)
        card.set_result(ev.ok, ev.output, ev.diff, ev.exit_code, ev.command)

    def history(self, messages: list[dict]) -> None:
        """A resumed session's user and assistant messages."""
        for m in messages:
            role = m.get("role")
            content = str(m.get("content") or "")
            if role == "user" and content.strip():
                self.user(content)
            elif role == "assistant":
                text = visible_text(content)
                if text:
                    view = AssistantView()
                    view.append_raw(text)
                    self.mount(view)

    async def flush_current(self) -> None:
        view = self.current
        if view is not None and view.dirty:
            await view.flush()
