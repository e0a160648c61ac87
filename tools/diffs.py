"""Unified diffs of edits (pure)."""

from __future__ import annotations

import difflib
import re


def make_diff(path: str, old: str, new: str, context: int = 3) -> str:
    """Unified diff from ``old`` to ``new`` text of ``path`` ('' when they are equal).

    A missing final newline is marked the way git marks it.
    """
    if old == new:
        return ""
    a = _lines(old)
    b = _lines(new)
    fromfile = f"a/{path}" if old else "/dev/null"
    tofile = f"b/{path}"
    return "".join(difflib.unified_diff(a, b, fromfile, tofile, n=context))


def _lines(text: str) -> list[str]:
    lines = [ln for ln in re.split(r"(?<=\n)", text) if ln]
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def diff_stats(diff: str) -> tuple[int, int]:
    """(added, removed) line counts of a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed
