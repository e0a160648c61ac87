"""Small text helpers every front end renders tool results with."""

from __future__ import annotations

MAX_OUTPUT_LINES = 60


def clip_lines(text: str, limit: int = MAX_OUTPUT_LINES) -> str:
    """At most ``limit`` lines, and how many were left out."""
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join(lines[:limit] + [f"… {len(lines) - limit} more lines"])


def first_line(text: str) -> str:
    """The first non-blank line, stripped and cut to 200 characters."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


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
