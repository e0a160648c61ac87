"""Files the user names in a message are attached to it, so a small model sees their exact text
(and can copy SEARCH text from it) without spending a step on read_file."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

MAX_FILES = 4
MAX_FILE_CHARS = 12_000
MAX_TOTAL_CHARS = 24_000

_PATHLIKE = re.compile(r"[\w][\w./\\-]*\.[A-Za-z0-9_]+")


def mentioned_files(text: str, files: Sequence[str]) -> list[str]:
    """Workspace files named in ``text``: by relative path, or by a file name unique in the repo."""
    by_name: dict[str, list[str]] = {}
    for f in files:
        by_name.setdefault(f.rsplit("/", 1)[-1], []).append(f)
    known = set(files)
    found: list[str] = []
    for m in _PATHLIKE.finditer(text):
        token = m.group(0).strip("./\\").replace("\\", "/")
        if token.startswith("/"):
            continue
        hit = token if token in known else None
        if hit is None and "/" not in token and len(by_name.get(token, [])) == 1:
            hit = by_name[token][0]
        if hit and hit not in found:
            found.append(hit)
    return found[:MAX_FILES]


def attach_files(root: Path, text: str, files: Sequence[str]) -> tuple[str, list[str]]:
    """``text`` followed by the contents of the files it mentions; and those files' paths."""
    parts: list[str] = []
    attached: list[str] = []
    total = 0
    for rel in mentioned_files(text, files):
        try:
            body = (root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if len(body) > MAX_FILE_CHARS or total + len(body) > MAX_TOTAL_CHARS:
            continue
        total += len(body)
        attached.append(rel)
        parts.append(f"{rel}\n```\n{body}{'' if body.endswith(chr(10)) else chr(10)}```")
    if not parts:
        return text, []
    return text + "\n\n(Current content of the files mentioned above:)\n" + "\n\n".join(parts), attached
