"""Undo of agent edits, turn by turn, that cannot lose the user's work.

Before a tool writes a file it calls ``journal.record(path)``; the first record of a path in a
turn keeps its pre-image (bytes and mode, or "did not exist"). After the write it calls
``journal.wrote(path, data)``, which keeps a hash of what the agent wrote. ``undo()`` puts a
file back only while it still holds exactly that; a file changed since (by the user, an
editor, a formatter) is left as it is and reported in ``last_kept``. Files the agent created
are removed only while unchanged. Every step goes through ``tools.atomic``'s no-follow
helpers, so a directory swapped for a symlink never leads undo outside the workspace.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from tools.atomic import SymlinkSwapped, atomic_write, read_nofollow, rmdir_nofollow, unlink_nofollow


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class PreImage:
    path: Path  # absolute
    content: bytes | None  # None: the file did not exist
    mode: int | None = None
    created_dirs: tuple[Path, ...] = ()  # directories that did not exist yet, deepest first
    written: str | None = None  # sha256 of what the agent last wrote; None: nothing written yet


@dataclass
class _Turn:
    images: dict[Path, PreImage] = field(default_factory=dict)


def capture(path: Path, root: Path) -> PreImage:
    """The current state of ``path`` (pure read, never through a symlink)."""
    content = read_nofollow(path)
    if content is None:
        missing = []
        parent = path.parent
        while parent != root and parent.is_relative_to(root) and not os.path.lexists(parent):
            missing.append(parent)
            parent = parent.parent
        return PreImage(path, None, None, tuple(missing))
    st = os.stat(path, follow_symlinks=False)
    return PreImage(path, content, stat.S_IMODE(st.st_mode))


def restore(image: PreImage) -> str | None:
    """Put a file back to a captured state while it holds what the agent wrote.
    Returns None when restored (or already as before), else why it was left as is."""
    try:
        now = read_nofollow(image.path)
    except SymlinkSwapped:
        return "it or a folder above it is now a symlink; left as is"
    current = digest(now)
    if current != digest(image.content):  # else already as it was (the write never happened, or was undone)
        if image.written is None or current != image.written:
            return "changed since the agent wrote it; left as is"
        if image.content is not None:
            atomic_write(image.path, image.content, image.mode)
            return None
        unlink_nofollow(image.path)
    for d in image.created_dirs:
        try:
            rmdir_nofollow(d)  # only if empty: files the user added there stay
        except OSError:
            break
    return None


class UndoJournal:
    """Pre-images of the files the agent wrote, one entry per agent turn."""

    def __init__(self, root: Path | str, max_turns: int = 50) -> None:
        self.root = Path(root).resolve()
        self.max_turns = max_turns
        self._turns: list[_Turn] = []
        self._lock = threading.Lock()
        self.last_failures: list[str] = []  # "path: reason" of files the last undo did not restore
        self.last_kept: list[str] = []  # relative paths the last undo left alone: changed since

    def begin_turn(self) -> None:
        """Start a new agent turn; later records belong to it."""
        with self._lock:
            if self._turns and not self._turns[-1].images:
                return
            self._turns.append(_Turn())
            del self._turns[: -self.max_turns]

    def _key(self, path: Path | str) -> Path | None:
        p = Path(path)
        p = p if p.is_absolute() else self.root / p
        p = p.parent.resolve() / p.name
        if not p.is_relative_to(self.root) or p == self.root:
            return None
        return p

    def record(self, path: Path | str) -> None:
        """Remember ``path``'s state before the agent writes it. The first record in a turn
        keeps the pre-image; a later one whose file no longer holds what the agent wrote
        (the user saved in between) takes the user's version as the state to return to."""
        p = self._key(path)
        if p is None or (os.path.isdir(p) and not os.path.islink(p)):
            return
        with self._lock:
            if not self._turns:
                self._turns.append(_Turn())
            turn = self._turns[-1]
            old = turn.images.get(p)
            if old is not None and old.written is not None:
                try:
                    if digest(read_nofollow(p)) == old.written:
                        return
                except SymlinkSwapped:
                    return
            elif old is not None:
                return
            try:
                turn.images[p] = capture(p, self.root)
            except SymlinkSwapped:
                return

    def wrote(self, path: Path | str, data: bytes) -> None:
        """Called by a tool after it wrote ``data`` to ``path``."""
        p = self._key(path)
        if p is None:
            return
        with self._lock:
            turn = self._turns[-1] if self._turns else None
            if turn is not None and p in turn.images:
                turn.images[p] = replace(turn.images[p], written=digest(data))

    @property
    def can_undo(self) -> bool:
        with self._lock:
            return any(t.images for t in self._turns)

    def pending(self) -> list[str]:
        """Relative paths ``undo()`` would restore now."""
        with self._lock:
            for turn in reversed(self._turns):
                if turn.images:
                    return [self._rel(p) for p in turn.images]
        return []

    def undo(self) -> list[str]:
        """Restore the files of the last turn that wrote any; returns their relative paths.
        Files changed since the agent wrote them are kept (``last_kept``, ``last_failures``)."""
        with self._lock:
            while self._turns and not self._turns[-1].images:
                self._turns.pop()
            if not self._turns:
                return []
            turn = self._turns.pop()
        restored: list[str] = []
        failed: dict[Path, PreImage] = {}
        self.last_failures = []
        self.last_kept = []
        for image in reversed(list(turn.images.values())):
            rel = self._rel(image.path)
            try:
                kept = restore(image)
            except OSError as e:
                failed[image.path] = image
                self.last_failures.append(f"{rel}: {e.strerror or e}")
                continue
            if kept is not None:
                self.last_kept.append(rel)
                self.last_failures.append(f"{rel}: {kept}")
                continue
            restored.append(rel)
        if failed:  # keep what could not be restored, so a later undo can retry it
            with self._lock:
                self._turns.append(_Turn(failed))
        restored.reverse()
        return restored

    def _rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()
