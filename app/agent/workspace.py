"""The workspace as the agent sees it: what changed (diff vs HEAD) and who changed it.

``TrackingJournal`` sits between the tools and the undo journal: it remembers each file's
content before the agent first wrote it, which gives a diff of the agent's edits where the
workspace is not a git repository.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.agent.confined import read_confined
from app.diffview import unified_diff
from engine.types import Engine
from tools.gitcmd import GitOutput, GitUnavailable, nul_split, run_git

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
CONTEXT_FILE_BYTES = 512_000


def _git(root: Path, *args: str) -> GitOutput:
    try:  # tools.gitcmd: no planted fsmonitor, hook, pager or external diff runs
        return run_git(root, *args)
    except GitUnavailable as e:
        return GitOutput(1, "", str(e))


def is_git_repo(root: Path) -> bool:
    try:
        return _git(root, "rev-parse", "--is-inside-work-tree").stdout.strip() == "true"
    except OSError:
        return False


def git_diff(root: Path) -> str:
    """Tracked changes vs HEAD plus untracked (not ignored) files as new files."""
    base = "HEAD" if _git(root, "rev-parse", "--verify", "-q", "HEAD").returncode == 0 else EMPTY_TREE
    out = _git(root, "diff", "--no-color", "--no-ext-diff", "--no-textconv", base, "--", ".").stdout
    untracked = nul_split(_git(root, "ls-files", "-z", "--others", "--exclude-standard", "--", ".").stdout)
    for rel in untracked:
        text = read_confined(root, rel)
        if text is not None:
            out += unified_diff("", text, rel)
    return out


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


class TrackingJournal:
    """A JournalLike that remembers originals and forwards to the undo journal (if any)."""

    def __init__(self, root: Path, inner: Any | None = None) -> None:
        self.root = root
        self.inner = inner
        self.originals: dict[Path, str | None] = {}

    def record(self, path: Path) -> None:
        path = Path(path)
        if path not in self.originals:
            self.originals[path] = _read(path)
        if self.inner is not None:
            self.inner.record(path)

    def wrote(self, path: Path, data: bytes) -> None:
        """Forwarded so the undo journal knows what the agent wrote (tools.undo)."""
        wrote = getattr(self.inner, "wrote", None)
        if callable(wrote):
            wrote(path, data)

    def edits_diff(self) -> str:
        parts = []
        for path, old in sorted(self.originals.items()):
            new = _read(path)
            if new == old:
                continue
            try:
                rel = path.relative_to(self.root).as_posix()
            except ValueError:
                rel = path.as_posix()
            parts.append(unified_diff(old or "", new or "", rel))
        return "".join(parts)


def workspace_diff(root: Path, journal: TrackingJournal | None = None) -> str:
    if is_git_repo(root):
        return git_diff(root)
    return journal.edits_diff() if journal is not None else ""


def register_files(engine: Engine, root: Path, paths: Sequence[str]) -> None:
    """Feed files the agent read or wrote to the engine's n-gram drafter (key ``file:<path>``)."""
    for rel in paths:
        text = read_confined(root, rel, CONTEXT_FILE_BYTES, errors="replace")
        if text is not None:
            engine.register_context(f"file:{rel}", text)
