"""Widgets of the conversation, the prompt and the live status bar."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.color import Color
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Collapsible, Markdown, Static, TextArea

from app.tui import commands
from app.tui.statsfmt import StatusField, status_fields
from engine.types import GenStats

TOOL_TAGS_RE = re.compile(r"<(tool_call|function_call|tools)>.*?(?:</\1>|$)", re.S)
FENCE_RE = re.compile(r"```[A-Za-z_]*[ \t]*(?:\n|$)(.*?)(```|$)", re.S)
PARTIAL_TAGS = ("<tool_call>", "<function_call>", "<tools>")
MAX_OUTPUT_LINES = 60


def _hide_fence(m: re.Match[str]) -> str:
    body = m.group(1).strip()
    closed = bool(m.group(2))
    if closed:  # a finished fenced block: hidden only if it is a tool call
        return "" if ('"name"' in body and '"arguments"' in body) else m.group(0)
    return "" if (not body or body.startswith("{")) else m.group(0)  # may become a call: wait


def visible_assistant_text(raw: str) -> str:
    """Streamed assistant text without (possibly partial) tool-call markup.

    Mirrors the forms the agent accepts: tagged calls, fenced JSON calls and a reply that is
    one bare JSON object. The final AssistantMessage replaces the streamed text anyway.
    """
    text = TOOL_TAGS_RE.sub("", raw)
    text = FENCE_RE.sub(_hide_fence, text)
    if text.lstrip().startswith("{"):
        return ""
    cut = text.rfind("<")
    if cut >= 0 and any(tag.startswith(text[cut:]) for tag in PARTIAL_TAGS):
        text = text[:cut]
    return text.strip()


def theme_color(widget: Any, name: str, default: str) -> str:
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


def syntax_theme(widget: Any) -> str:
    try:
        dark = bool(widget.app.current_theme.dark)
    except Exception:
        dark = True
    return "monokai" if dark else "friendly"


def diff_renderable(widget: Any, diff: str) -> RenderableType:
    bg = theme_color(widget, "surface", "#1B1F24")
    return Syntax(diff.rstrip("\n"), "diff", theme=syntax_theme(widget), background_color=bg, word_wrap=True)


def clip_lines(text: str, limit: int = MAX_OUTPUT_LINES) -> str:
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join(lines[:limit] + [f"… {len(lines) - limit} more lines"])


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
        return visible_assistant_text(self.raw) != self.shown

    async def flush(self) -> None:
        # one update at a time: Markdown.update replaces the blocks it saw when it started
        if not self._ready:
            return  # Markdown's own mount renders its initial (empty) document first
        async with self._flush_lock:
            text = visible_assistant_text(self.raw)
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


def tool_title(name: str, arguments: dict[str, Any]) -> str:
    if name == "run_shell":
        return f"$ {arguments.get('command', '')}".strip()
    path = arguments.get("path") or arguments.get("pattern") or arguments.get("query") or ""
    icon = {"edit_file": "✎", "write_file": "✎", "read_file": "▤", "list_files": "▤", "grep": "⌕"}.get(name, "⚙")
    return f"{icon} {name} {path}".rstrip()


class ToolCard(Collapsible):
    """A tool call: title while running; the diff / command output once done."""

    DEFAULT_CSS = """
    ToolCard { margin: 1 0 0 0; background: $surface; border-top: none; padding: 0; }
    ToolCard.-ok > CollapsibleTitle { color: $success; }
    ToolCard.-failed > CollapsibleTitle { color: $error; }
    ToolCard > Contents { padding: 0 1 0 2; }
    ToolCard .card-meta { color: $text-muted; }
    """

    def __init__(self, call_id: str, name: str, arguments: dict[str, Any]) -> None:
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.base_title = tool_title(name, arguments)
        args = {k: v for k, v in arguments.items() if k not in ("content", "search", "replace")}
        shown = Text(json.dumps(args, ensure_ascii=False)[:400]) if args else Text("")
        self.body = Static(shown, markup=False, classes="card-body")
        self.meta = Static("running…", markup=False, classes="card-meta")
        super().__init__(self.meta, self.body, title=f"{self.base_title}  …", collapsed=True)
        self.done = False
        self.result_ok: bool | None = None
        self.diff: str | None = None
        self.output = ""
        self.exit_code: int | None = None


    def set_result(self, ok: bool, output: str, diff: str | None, exit_code: int | None, command: str | None) -> None:
        self.done = True
        self.result_ok = ok
        self.diff, self.output, self.exit_code = diff, output, exit_code
        self.add_class("-ok" if ok else "-failed")
        mark = "✓" if ok else "✗"
        parts: list[RenderableType] = []
        if command is not None or self.tool_name == "run_shell":
            cmd = command if command is not None else str(self.arguments.get("command", ""))
            code = "?" if exit_code is None else str(exit_code)
            self.title = f"{mark} $ {cmd}  (exit {code})"
            self.meta.update(Text(f"command: {cmd}   exit code: {code}"))
            if output.strip():
                parts.append(Text(clip_lines(output)))
            self.collapsed = False
        elif diff:
            self.title = f"{mark} {self.base_title}"
            self.meta.update(Text(diff_summary(diff, str(self.arguments.get("path", "")))))
            parts.append(diff_renderable(self, diff))
            self.collapsed = False
        else:
            self.title = f"{mark} {self.base_title}"
            self.meta.update(Text(first_line(output)))
            parts.append(Text(clip_lines(output, 30)))
            self.collapsed = ok  # failures open, reads stay folded
        self.body.update(Group(*parts) if parts else Text(""))


def diff_summary(diff: str, path: str = "") -> str:
    """'a.py  +1 -1' from a unified diff."""
    adds = dels = 0
    for line in diff.splitlines():
        if line.startswith("+++") or line.startswith("---"):
            if not path and line.startswith("+++ "):
                path = line[4:].removeprefix("b/")
            continue
        if line.startswith("+"):
            adds += 1
        elif line.startswith("-"):
            dels += 1
    return f"{path}  +{adds} -{dels}".strip()


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


class DiffCard(Collapsible):
    """A standalone diff (``/diff``)."""

    DEFAULT_CSS = """
    DiffCard { margin: 1 0 0 0; background: $surface; border-top: none; }
    """

    def __init__(self, title: str, diff: str) -> None:
        self._diff = diff
        self.body = Static("", markup=False)
        super().__init__(self.body, title=title, collapsed=False)

    def on_mount(self) -> None:
        self.body.update(diff_renderable(self, self._diff) if self._diff.strip() else Text("no changes"))


@dataclass
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
        for k, v in changes.items():
            setattr(self.live, k, v)
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


class Conversation(Vertical):
    DEFAULT_CSS = """
    Conversation { height: auto; padding: 0 1 1 1; }
    """
