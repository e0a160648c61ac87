"""The live status bar: the engine's speed figures, then the state, context, mode and models."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from rich.text import Text
from textual.widgets import Static

from app.controller.statsfmt import StatusField, status_fields
from app.tui.widgets import theme_color
from engine.types import GenStats


@dataclass(frozen=True)
class LiveState:
    state: str = "idle"  # idle | loading | generating | cancelling | error
    stats: GenStats | None = None
    context_tokens: int = 0
    context_limit: int = 0
    model: str = ""
    draft_model: str | None = None
    mode: str = "ask"
    message: str = ""


class StatusBar(Static):
    """Two lines: the engine's live speed figures; the state, context, mode and models."""

    DEFAULT_CSS = """
    StatusBar { height: auto; max-height: 6; background: $panel; color: $foreground; padding: 0 1; }
    """

    def __init__(self, **kw: Any) -> None:
        super().__init__("", **kw)
        self.live = LiveState()

    def set_live(self, **changes: Any) -> None:
        self.live = replace(self.live, **changes)
        self.refresh_bar()

    def fields(self) -> list[StatusField]:
        s = self.live
        return status_fields(
            s.stats,
            context_tokens=s.context_tokens,
            context_limit=s.context_limit,
            model=s.model,
            draft_model=s.draft_model,
        )

    def refresh_bar(self) -> None:
        self.update(self.render_text())

    def on_resize(self) -> None:
        self.refresh_bar()

    def render_text(self) -> Text:
        """Fields packed into lines that fit the width: speed figures first, then the state line."""
        s = self.live
        key = theme_color(self, "primary", "#5FAFFF")
        good = theme_color(self, "success", "#5FD787")
        warn = theme_color(self, "warning", "#FFD75F")
        bad = theme_color(self, "error", "#FF5F5F")
        muted = theme_color(self, "text-muted", "#888888")
        by_key = {f.key: f for f in self.fields()}
        speed: list[Text] = []
        for k in ("decode", "wall", "tau", "accept", "drafters", "ceiling"):
            f = by_key.get(k)
            if f is None:
                continue
            style = f"bold {key}" if k in ("decode", "tau") else (good if k == "accept" else "")
            speed.append(Text.assemble((f.label + " ", muted), (f.value, style)))
        if not speed:
            waiting = "reading the prompt…" if s.state == "generating" else "no generation yet"
            speed.append(Text(waiting, style=muted))
        icons = {
            "idle": ("○ ready", good),
            "loading": ("◌ loading model", warn),
            "generating": ("● generating", key),
            "cancelling": ("● cancelling", warn),
            "error": ("✗ error", bad),
        }
        label, style = icons.get(s.state, (s.state, ""))
        state = Text(label, style=f"bold {style}")
        if s.message:
            state.append(f" {s.message}", style=muted)
        second = [state, Text.assemble(("mode ", muted), s.mode)]
        for k in ("ctx", "model"):
            f = by_key.get(k)
            if f is not None:
                second.append(Text.assemble((f.label + " ", muted), f.value))
        width = max(0, self.size.width - 2)
        lines = pack(speed, width) + pack(second, width)
        return Text("\n").join(lines)


def pack(parts: list[Text], width: int, sep: str = "  ") -> list[Text]:
    """Join parts with ``sep`` into as few lines of at most ``width`` cells as fit (0 = one line)."""
    lines: list[Text] = []
    line = Text()
    for part in parts:
        if line.cell_len and width and line.cell_len + len(sep) + part.cell_len > width:
            lines.append(line)
            line = Text()
        if line.cell_len:
            line.append(sep)
        line.append_text(part)
    lines.append(line)
    return lines
