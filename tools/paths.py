"""Workspace confinement: every path a tool touches must stay under the workspace root."""

from __future__ import annotations

import os
from pathlib import Path


class PathEscape(ValueError):
    """A path that leaves the workspace (``..``, an absolute path, or a symlink pointing out)."""


def resolve_in_workspace(root: Path | str, path: str | os.PathLike[str] | None) -> Path:
    """Resolve ``path`` (relative to ``root`` or absolute) to an absolute path inside ``root``.

    Symlinks are followed, so a link that points outside the workspace is refused too.
    Raises ``PathEscape`` with a message meant for the model.
    """
    base = Path(root).resolve()
    raw = "" if path is None else os.fspath(path)
    if "\x00" in raw:
        raise PathEscape(f"path {raw!r} contains a NUL byte")
    if any("\ud800" <= c <= "\udfff" for c in raw):
        raise PathEscape(f"path {raw!r} contains a lone surrogate; send valid Unicode")
    candidate = Path(raw) if raw else Path(".")
    joined = candidate if candidate.is_absolute() else base / candidate
    lexical = Path(os.path.normpath(joined))
    if not _inside(lexical, base) and not _inside(lexical, Path(root).absolute()):
        raise PathEscape(
            f"path {raw!r} is outside the workspace {base}; only paths under the workspace are allowed"
        )
    try:
        resolved = joined.resolve()
    except (RuntimeError, OSError) as e:  # a symlink loop (RuntimeError before Python 3.13)
        raise PathEscape(f"path {raw!r} cannot be resolved (a symlink loop?): {e}") from None
    if not _inside(resolved, base):
        raise PathEscape(
            f"path {raw!r} resolves through a symlink to {resolved}, outside the workspace {base}; refused"
        )
    return resolved


def relative(root: Path | str, path: Path) -> str:
    """Workspace-relative POSIX spelling of an absolute path under ``root`` ('.' for the root)."""
    rel = Path(path).relative_to(Path(root).resolve()).as_posix()
    return rel or "."


def _inside(path: Path, base: Path) -> bool:
    return path == base or path.is_relative_to(base)
