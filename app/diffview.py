"""Unified diffs for people: build one, and colour it with pygments' DiffLexer on a terminal."""

from __future__ import annotations

import difflib
import os
from typing import TextIO


def unified_diff(old: str, new: str, path: str) -> str:
    """A git-style unified diff of one file's text ('' old = new file)."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}" if old else "/dev/null",
        tofile=f"b/{path}",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def colorize_diff(diff: str, style: str = "ansi") -> str:
    """ANSI-coloured diff (pygments DiffLexer). ``style``: 'ansi' (16 colours) or a pygments style."""
    from pygments import highlight
    from pygments.formatters import Terminal256Formatter, TerminalFormatter
    from pygments.lexers import DiffLexer

    formatter = TerminalFormatter() if style == "ansi" else Terminal256Formatter(style=style)
    return highlight(diff, DiffLexer(), formatter)


def wants_color(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def render_diff(diff: str, stream: TextIO) -> str:
    """The diff coloured when ``stream`` is a colour terminal, else unchanged."""
    return colorize_diff(diff) if diff and wants_color(stream) else diff
