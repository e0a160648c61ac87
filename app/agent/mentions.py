"""Files the user names in a message are attached to it, so a small model sees their exact text
(and can copy SEARCH text from it) without spending a step on read_file. A headless job in a
tiny workspace gets every file attached: small models rarely read before they guess.
Files that may hold secrets are never attached (reading them needs approval)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from app.agent.confined import read_confined
from tools.secret_files import is_secret_path

MAX_FILES = 4
MAX_FILE_CHARS = 12_000
MAX_TOTAL_CHARS = 24_000
SMALL_WORKSPACE_CHARS = 8_000  # a workspace this small is attached whole to a headless job
SMALL_WORKSPACE_FILES = 12

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


def small_workspace(root: Path, files: Sequence[str]) -> list[str]:
    """All of the workspace's files when they are few, small, text and not secret; else []."""
    if not files or len(files) > SMALL_WORKSPACE_FILES:
        return []
    total = 0
    for rel in files:
        if is_secret_path(rel):
            return []
        body = read_confined(root, rel)  # a symlink out or to a secret file spoils the whole set
        if body is None:
            return []
        total += len(body)
        if total > SMALL_WORKSPACE_CHARS:
            return []
    return list(files)


def attach_files(root: Path, text: str, files: Sequence[str], *, whole_small_workspace: bool = False) -> tuple[str, list[str]]:
    """``text`` followed by the contents of the files it mentions (or, when it names none, of
    the whole workspace if it is small and ``whole_small_workspace``); and those files' paths."""
    parts: list[str] = []
    attached: list[str] = []
    total = 0
    names = mentioned_files(text, files)  # files the user names are the focus
    small = small_workspace(root, files) if whole_small_workspace and not names else []
    names = names or small
    for rel in names:
        body = read_confined(root, rel)
        if body is None:
            continue
        if len(body) > MAX_FILE_CHARS or total + len(body) > MAX_TOTAL_CHARS:
            continue
        total += len(body)
        attached.append(rel)
        parts.append(f"{rel}\n```\n{body}{'' if body.endswith(chr(10)) else chr(10)}```")
    if not parts:
        return text, []
    what = "the workspace's files" if small else "the files mentioned above"
    return text + f"\n\n(Current content of {what}:)\n" + "\n\n".join(parts), attached
