"""The prompt: a multi-line input with history and slash-command completion, and its suggestions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static, TextArea

from app.controller import commands
from app.tui.widgets import theme_color


class PromptArea(TextArea):
    """Multi-line prompt: Enter sends, ctrl+j (or shift+enter) inserts a newline, up/down walk history."""

    BINDINGS = [
        Binding("enter", "submit", "send", show=True, priority=False),
        Binding("ctrl+j", "newline", "newline", show=True),
        Binding("tab", "complete", "complete", show=False),
    ]

    class Submitted(Message):
        def __init__(self, area: PromptArea, text: str) -> None:
            super().__init__()
            self.area = area
            self.text = text

    def __init__(self, history: list[str] | None = None, **kw: Any) -> None:
        super().__init__(show_line_numbers=False, soft_wrap=True, tab_behavior="focus", **kw)
        self.cursor_blink = False  # a steady cursor (and stable screenshots)
        self.input_history: list[str] = list(history or [])
        self._hist_pos: int | None = None
        self._draft = ""

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            event.prevent_default()
            event.stop()
            self.action_submit()
            return
        if key in ("ctrl+j", "shift+enter", "alt+enter"):
            event.prevent_default()
            event.stop()
            self.action_newline()
            return
        if key == "tab" and commands.complete(self.text):
            event.prevent_default()
            event.stop()
            self.action_complete()
            return
        if key == "up" and self.cursor_location[0] == 0 and self.input_history:
            event.prevent_default()
            event.stop()
            self.history_prev()
            return
        if key == "down" and self.cursor_location[0] == self.document.line_count - 1 and self._hist_pos is not None:
            event.prevent_default()
            event.stop()
            self.history_next()
            return
        await super()._on_key(event)

    def action_submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        if not self.input_history or self.input_history[-1] != text:
            self.input_history.append(text)
        self._hist_pos = None
        self._draft = ""
        self.clear()
        self.post_message(self.Submitted(self, text))

    def action_newline(self) -> None:
        self.insert("\n")

    def action_complete(self) -> None:
        hits = commands.complete(self.text)
        if hits:
            self._set_text(hits[0] + " ")

    def _set_text(self, text: str) -> None:
        self.load_text(text)
        last = self.document.line_count - 1
        self.move_cursor((last, len(self.document.get_line(last))))

    def history_prev(self) -> None:
        if self._hist_pos is None:
            self._draft = self.text
            self._hist_pos = len(self.input_history)
        if self._hist_pos > 0:
            self._hist_pos -= 1
            self._set_text(self.input_history[self._hist_pos])

    def history_next(self) -> None:
        if self._hist_pos is None:
            return
        self._hist_pos += 1
        if self._hist_pos >= len(self.input_history):
            self._hist_pos = None
            self._set_text(self._draft)
        else:
            self._set_text(self.input_history[self._hist_pos])


class Suggestions(Static):
    """Slash-command completions shown above the prompt while typing '/...'."""

    DEFAULT_CSS = """
    Suggestions { display: none; background: $surface; color: $foreground; padding: 0 1; height: auto; max-height: 12; }
    Suggestions.-shown { display: block; }
    """

    def show_for(self, text: str) -> None:
        hits = commands.complete(text)
        if not hits:
            self.remove_class("-shown")
            return
        by_name = {"/" + c.name: c for c in commands.COMMANDS}
        out = Text()
        accent = theme_color(self, "accent", "#FFAF5F")
        muted = theme_color(self, "text-muted", "#888888")
        for i, h in enumerate(hits):
            c = by_name[h]
            if i:
                out.append("\n")
            out.append(f"{h} {c.args}".rstrip(), style=f"bold {accent}" if i == 0 else "")
            out.append(f"  {c.help}", style=muted)
        out.append("\n")
        out.append("tab completes", style=muted)
        self.update(out)
        self.add_class("-shown")


HISTORY_MAX = 500


def load_history(path: Path) -> list[str]:
    """The prompt's saved inputs (one a line, newlines escaped); [] if there are none."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [e.replace("\\n", "\n") for e in raw.splitlines() if e][-HISTORY_MAX:]


def save_history(path: Path, history: list[str]) -> None:
    """Keep the last inputs; a history that cannot be written is not worth an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [h.replace("\n", "\\n") for h in history[-HISTORY_MAX:]]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError:
        pass
