"""Cards in the conversation: a tool call with its result, and a standalone diff (/diff)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widgets import Collapsible, Static

from app.controller.textfmt import clip_lines, diff_summary, first_line
from app.tui.widgets import diff_renderable


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
