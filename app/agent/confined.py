"""Workspace files the agent reads into a prompt unasked: confined to the workspace, never secret.

Mentions, instruction files, the repo map, the workspace diff and the drafter's registrations
all read through here, so a symlink pointing out of the workspace (``setup.cfg ->
~/.aws/credentials``) or to a secret file inside it is skipped exactly as the file tools refuse it.
"""

from __future__ import annotations

from pathlib import Path

from tools.paths import PathEscape, relative, resolve_in_workspace
from tools.secret_files import is_secret_path


def confined_file(root: Path, rel: str) -> Path | None:
    """The resolved path of workspace file ``rel``, or None when it leaves the workspace, is not a
    regular file, or its name or its symlink target names a secret file."""
    if is_secret_path(rel):
        return None
    try:
        path = resolve_in_workspace(root, rel)
        if is_secret_path(relative(root, path)) or not path.is_file():
            return None
    except (PathEscape, OSError, RuntimeError, ValueError):  # RuntimeError: a symlink loop
        return None
    return path


def read_confined(root: Path, rel: str, max_bytes: int | None = None, *, errors: str = "strict") -> str | None:
    """The UTF-8 text of ``rel`` when ``confined_file`` allows it (and it is at most ``max_bytes``)."""
    path = confined_file(root, rel)
    if path is None:
        return None
    try:
        if max_bytes is not None and path.stat().st_size > max_bytes:
            return None
        return path.read_text(encoding="utf-8", errors=errors)
    except (OSError, UnicodeDecodeError):
        return None
