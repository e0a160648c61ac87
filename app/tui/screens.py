"""Modal screens: the approval dialog, the /stats panel and text panels (/help, /sessions)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from app.controller.statsfmt import SessionStats, StatusField, drafter_shares, plot_rows
from app.controller.textfmt import clip_lines
from app.tui.widgets import diff_renderable, theme_color
from tools.permissions_types import ApprovalDecision, ApprovalRequest


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    """Ask before an edit or a command: approve once, always (this session), or reject with a note."""

    BINDINGS = [
        Binding("y", "approve", "approve"),
        Binding("a", "always", "always"),
        Binding("n", "reject", "reject"),
        Binding("escape", "reject", "reject", show=False),
    ]

    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > #dialog {
        width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 1 2;
    }
    ApprovalScreen #title { text-style: bold; color: $warning; }
    ApprovalScreen #summary { margin: 1 0; }
    ApprovalScreen #detail { height: auto; max-height: 20; background: $background; }
    ApprovalScreen #note { margin: 1 0 0 0; }
    ApprovalScreen #buttons { height: auto; margin: 1 0 0 0; }
    ApprovalScreen Button { margin: 0 1 0 0; }
    """

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        req = self.request
        what = {"edit": "Apply this edit?", "shell": "Run this command?"}.get(req.kind, "Allow this action?")
        with Vertical(id="dialog"):
            yield Label(what, id="title")
            yield Static(Text(req.summary), id="summary", markup=False)
            with VerticalScroll(id="detail"):
                yield Static(self._detail(), markup=False)
            yield Input(placeholder="note to the model if you reject (enter rejects with it)", id="note")
            with Horizontal(id="buttons"):
                yield Button("Approve (y)", id="approve", variant="success")
                yield Button("Always this session (a)", id="always", variant="primary")
                yield Button("Reject (n)", id="reject", variant="error")

    def _detail(self) -> RenderableType:
        req = self.request
        if req.diff:
            return diff_renderable(self, req.diff)
        if req.command:
            return Text("$ " + req.command, style=f"bold {theme_color(self, 'accent', '#FFAF5F')}")
        return Text(req.path or req.tool)

    def on_mount(self) -> None:
        self.query_one("#approve", Button).focus()

    def _note(self) -> str:
        return self.query_one("#note", Input).value.strip()

    def action_approve(self) -> None:
        self.dismiss(ApprovalDecision(True))

    def action_always(self) -> None:
        self.dismiss(ApprovalDecision(True, always=True))

    def action_reject(self) -> None:
        self.dismiss(ApprovalDecision(False, note=self._note()))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        {"approve": self.action_approve, "always": self.action_always, "reject": self.action_reject}[
            str(event.button.id)
        ]()

    @on(Input.Submitted, "#note")
    def _note_submitted(self) -> None:
        self.action_reject()


class PanelScreen(ModalScreen[None]):
    """A read-only panel over the session: esc (or q) closes it."""

    BINDINGS = [Binding("escape", "close", "close"), Binding("q", "close", "close", show=False)]

    DEFAULT_CSS = """
    PanelScreen { align: center middle; }
    PanelScreen > #panel {
        width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    PanelScreen #title { text-style: bold; color: $primary; margin: 0 0 1 0; }
    PanelScreen #hint { color: $text-muted; margin: 1 0 0 0; }
    """

    def action_close(self) -> None:
        self.dismiss(None)


class StatsScreen(PanelScreen):
    """Session totals, the drafters, and tok/s and tau per turn as unicode plots."""


    def __init__(self, session: SessionStats, live: list[StatusField] | None = None) -> None:
        super().__init__()
        self.session = session
        self.live = [f for f in (live or []) if f.key in ("decode", "wall", "tau", "accept", "drafters", "ceiling")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="panel"):
            yield Label("Session statistics", id="title")
            yield Static(self._body(), markup=False, id="body")
            yield Label("esc closes", id="hint")

    def _body(self) -> RenderableType:
        s = self.session
        total = s.totals()
        tot = total.stats
        turns = s.measured
        key = theme_color(self, "primary", "#5FAFFF")
        good = theme_color(self, "success", "#5FD787")
        acc = theme_color(self, "accent", "#FFAF5F")
        muted = theme_color(self, "text-muted", "#888888")
        head = Text()
        head.append("turns ", style=muted)
        head.append(str(len(turns)))
        head.append("   generations ", style=muted)
        head.append(str(total.generations))
        head.append("   prompt tokens ", style=muted)
        head.append(str(tot.prompt_tokens))
        head.append("   completion tokens ", style=muted)
        head.append(str(tot.completion_tokens))
        head.append("\ndecode ", style=muted)
        head.append(f"{tot.decode_tok_s:.1f} tok/s", style=f"bold {key}")
        head.append("   wall ", style=muted)
        head.append(f"{tot.wall_tok_s:.1f} tok/s")
        head.append("   τ ", style=muted)
        head.append(f"{tot.tau:.2f}", style=f"bold {key}")
        if s.ceiling_tok_s > 0:
            head.append("   ceiling ", style=muted)
            head.append(f"{tot.decode_tok_s / s.ceiling_tok_s:.0%} of {s.ceiling_tok_s:.0f} tok/s")
        drafted = sum(tot.drafted.values())
        if drafted:
            a = sum(tot.accepted.values())
            head.append("\ndrafted ", style=muted)
            head.append(f"{drafted}")
            head.append("   accepted ", style=muted)
            head.append(f"{a} ({a / drafted:.0%})")
            for name, share in drafter_shares(tot.accepted):
                d = tot.drafted.get(name, 0)
                head.append(f"\n  {name:<8}", style=acc)
                head.append(f" {share:>4.0%} of accepted  ", style="")
                head.append("█" * max(1, round(share * 30)), style=good)
                head.append(f"  acceptance {tot.accepted.get(name, 0) / d if d else 0:.0%}", style=muted)
        plots = Text()
        if turns:
            width = 60
            for title, vals, fmt in (
                ("decode tok/s", [t.stats.decode_tok_s for t in turns], "{:.1f}"),
                ("wall tok/s", [t.stats.wall_tok_s for t in turns], "{:.1f}"),
                ("τ per turn", [t.tau for t in turns], "{:.2f}"),
            ):
                for row in plot_rows(title, vals, width, fmt):
                    label, _, rest = row.partition(" ")
                    plots.append("\n")
                    plots.append(row[:14], style=muted)
                    plots.append(row[14:], style=good)
            plots.append("\n\nper turn", style=muted)
            for i, t in enumerate(turns[-12:], start=max(1, len(turns) - 11)):
                prompt = clip_lines(t.prompt.replace("\n", " "), 1)[:40]
                plots.append(
                    f"\n  {i:>2}  {t.stats.decode_tok_s:>7.1f} tok/s  τ {t.tau:>4.2f}  {t.stats.completion_tokens:>6} tok  {prompt}"
                )
        else:
            plots.append("\n\nno generations yet", style=muted)
        parts: list[RenderableType] = [head, plots]
        if self.live:
            live = Text("\n\nlast generation  ", style=muted)
            live.append("  ".join(f"{f.label} {f.value}" for f in self.live))
            parts.append(live)
        return Group(*parts)


class TextScreen(PanelScreen):
    """A read-only text panel (help, sessions, model)."""


    def __init__(self, title: str, body: RenderableType) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="panel"):
            yield Label(self.title_text, id="title")
            yield Static(self.body, markup=False)
            yield Label("esc closes", id="hint")
