"""The conversation's widgets (messages, notices) and the theme helpers the other widgets share."""

from __future__ import annotations

import asyncio
from typing import Protocol

from rich.console import RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.app import App
from textual.color import Color
from textual.containers import Vertical
from textual.widgets import Markdown, Static

from app.controller.visible import visible_text


class OnScreen(Protocol):
    """A widget or screen: what the theme helpers read the app's theme through."""

    @property
    def app(self) -> App[object]: ...


def theme_color(widget: OnScreen, name: str, default: str) -> str:
    """A theme colour as '#RRGGBB' (alpha blended over the background) for Rich styles."""
    if name == "text-muted":
        name = "foreground-muted"
    try:
        variables = widget.app.theme_variables
        color = Color.parse(variables[name])
        if color.a < 1.0:
            color = Color.parse(variables.get("background", "#000000")) + color
        return color.hex6
    except Exception:
        return default


def syntax_theme(widget: OnScreen) -> str:
    try:
        dark = bool(widget.app.current_theme.dark)
    except Exception:
        dark = True
    return "monokai" if dark else "friendly"


def diff_renderable(widget: OnScreen, diff: str) -> RenderableType:
    bg = theme_color(widget, "surface", "#1B1F24")
    return Syntax(diff.rstrip("\n"), "diff", theme=syntax_theme(widget), background_color=bg, word_wrap=True)


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $primary;
        background: $boost;
        color: $foreground;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Text(text), markup=False)
        self.text = text


class AssistantView(Markdown):
    """The assistant's streamed reply; updated from a buffer at a throttled rate."""

    DEFAULT_CSS = """
    AssistantView {
        margin: 1 0 0 0;
        padding: 0 1;
        background: $background;
    }
    """

    def __init__(self) -> None:
        super().__init__("")
        self.raw = ""
        self.shown = ""
        self.final = False
        self._flush_lock = asyncio.Lock()
        self._ready = False

    def on_mount(self) -> None:
        self._ready = True
        self.call_after_refresh(self.flush)

    def append_raw(self, text: str) -> None:
        self.raw += text

    @property
    def dirty(self) -> bool:
        return visible_text(self.raw) != self.shown

    async def flush(self) -> None:
        # one update at a time: Markdown.update replaces the blocks it saw when it started
        if not self._ready:
            return  # Markdown's own mount renders its initial (empty) document first
        async with self._flush_lock:
            text = visible_text(self.raw)
            if text != self.shown:
                self.shown = text
                await self.update(text)


class NoticeLine(Static):
    DEFAULT_CSS = """
    NoticeLine { color: $text-muted; margin: 1 0 0 0; padding: 0 1; }
    NoticeLine.-error { color: $error; border-left: thick $error; }
    NoticeLine.-warning { color: $warning; }
    NoticeLine.-block { color: $foreground; background: $surface; padding: 0 1; }
    """

    def __init__(self, text: RenderableType, kind: str = "") -> None:
        super().__init__(text, markup=False)
        if kind:
            self.add_class(f"-{kind}")


class Conversation(Vertical):
    DEFAULT_CSS = """
    Conversation { height: auto; padding: 0 1 1 1; }
    """
