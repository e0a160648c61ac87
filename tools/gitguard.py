"""Paths git reads as its own: a file tool never writes them.

Git reads more than ``.git/``: any ``.git`` component (nested repositories, and ``.GIT`` on a
case-insensitive file system), the workspace root itself when it has no ``.git`` entry (a
root holding ``HEAD``, ``objects``, ``refs`` is a git directory, and its ``config`` can run
commands), and the hooks directory ``core.hooksPath`` names.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from tools.gitcmd import hooks_dir

# root-level names git reads when the root itself is taken for a git directory (case-folded)
ROOT_GIT_NAMES = frozenset(
    {"head", "objects", "refs", "packed-refs", "hooks", "info", "commondir", "gitdir", "worktrees", "modules"}
)
ROOT_GIT_FILES = frozenset({"config", "index"})  # refused as files; a folder of that name is not git's


def git_internal_reason(rel: str, root_has_git: bool, hooks_rel: str | None = None) -> str | None:
    """Why writing workspace-relative ``rel`` would change what git reads, or None (pure)."""
    parts = PurePosixPath(rel.replace("\\", "/")).parts
    if not parts:
        return None
    folded = [p.casefold().rstrip(". ") for p in parts]  # Windows drops trailing dots and spaces
    if ".git" in folded:
        return "files inside .git are managed by git"
    if not root_has_git and (folded[0] in ROOT_GIT_NAMES or (len(folded) == 1 and folded[0] in ROOT_GIT_FILES)):
        return "the workspace root has no .git, so git would read this as its own"
    if hooks_rel is not None:
        hooks = PurePosixPath(hooks_rel).parts
        if tuple(parts[: len(hooks)]) == hooks or tuple(folded[: len(hooks)]) == tuple(h.casefold() for h in hooks):
            return f"{hooks_rel} is git's hooks directory (core.hooksPath): git runs what is there"
    return None


def refuse_reason(root: Path, rel: str) -> str | None:
    """``git_internal_reason`` for a path in the workspace at ``root``, reading the repository's
    effective hooks directory."""
    root = Path(root)
    hooks = hooks_dir(root)
    hooks_rel: str | None = None
    if hooks is not None:
        resolved = Path(os.path.realpath(hooks))
        if resolved.name == "_":  # husky 9: hooksPath .husky/_ runs the scripts in .husky/
            resolved = resolved.parent
        base = Path(os.path.realpath(root))
        if resolved == base:
            hooks_rel = "."
        elif resolved.is_relative_to(base):
            hooks_rel = resolved.relative_to(base).as_posix()
    if hooks_rel == ".":  # hooks at the root: every root-level write could become a hook
        if len(PurePosixPath(rel).parts) == 1:
            return "the workspace root is git's hooks directory (core.hooksPath)"
        hooks_rel = None
    return git_internal_reason(rel, os.path.lexists(root / ".git"), hooks_rel)
