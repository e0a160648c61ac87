"""Undo of agent edits, turn by turn, that cannot lose the user's work.

Before a tool writes a file it calls ``journal.record(path)``; the first record of a path in a
turn keeps its pre-image (bytes and mode, or "did not exist"). After the write it calls
``journal.wrote(path, data)``, which keeps a hash of what the agent wrote. ``undo()`` puts a
file back only while it still holds exactly that; a file changed since (by the user, an
editor, a formatter) is left as it is and reported in ``last`` (a ``Kept`` per file, with a
few lines of what the agent wrote against what is there now). Files the agent created are
removed only while unchanged. Every step goes through ``tools.atomic``'s no-follow
helpers, so a directory swapped for a symlink never leads undo outside the workspace.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from tools.atomic import SymlinkSwapped, atomic_write, read_nofollow, rmdir_nofollow, unlink_nofollow
from tools.diffs import make_diff
from tools.visible import visible_line

HINT_BYTES = 64 * 1024  # what the agent wrote is kept for the hint up to this size (its hash always)
HINT_LINES = 8  # diff lines of a kept file's hint
HINT_WIDTH = 120  # characters per hint line


KEPT_WHY = {
    "changed": "changed since the agent wrote it; left as is",
    "deleted": "deleted since the agent wrote it; left deleted",
    "symlink": "it or a folder above it is now a symlink; left as is",
}


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class PreImage:
    path: Path  # absolute
    content: bytes | None  # None: the file did not exist
    mode: int | None = None
    created_dirs: tuple[Path, ...] = ()  # directories that did not exist yet, deepest first
    written: str | None = None  # sha256 of what the agent last wrote; None: nothing written yet
    wrote_data: bytes | None = None  # what the agent last wrote, when small (for the hint)


@dataclass(frozen=True)
class Kept:
    """A file undo left as it is."""

    path: str  # relative
    why: Literal["changed", "deleted", "symlink"]  # since the agent wrote it; "symlink": it or a folder above
    hint: str = ""  # the agent's text against the file's now, a few unified-diff lines ("" if unknown)


@dataclass(frozen=True)
class UndoReport:
    """What one undo did."""

    restored: tuple[str, ...] = ()
    kept: tuple[Kept, ...] = ()  # left as they are: the user's work
    failed: tuple[str, ...] = ()  # "path: error"; they stay undoable, a later undo tries again


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


def change_hint(rel: str, wrote: bytes | None, now: bytes | None) -> str:
    """The first lines of a diff from what the agent wrote to what ``rel`` holds now ("" if not text)."""
    if wrote is None or now is None:
        return ""
    try:
        old, new = wrote.decode("utf-8"), now.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    body = make_diff(rel, old, new, context=0).splitlines()[2:]  # no ---/+++ header: the path is named
    more = len(body) - HINT_LINES
    shown = [visible_line(line)[:HINT_WIDTH] for line in body[:HINT_LINES]]  # shown on a terminal
    return "\n".join(shown + ([f"... {more} more diff lines"] if more > 0 else []))


def restore(image: PreImage, rel: str = "") -> Kept | None:
    """Put a file back to a captured state while it holds what the agent wrote.
    Returns None when restored (or already as before), else a ``Kept`` saying why it was left."""
    try:
        now = read_nofollow(image.path)
    except SymlinkSwapped:
        return Kept(rel, "symlink")
    current = digest(now)
    if current != digest(image.content):  # else already as it was (the write never happened, or was undone)
        if image.written is None or current != image.written:
            return Kept(rel, "deleted") if now is None else Kept(rel, "changed", change_hint(rel, image.wrote_data, now))
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
        self.last = UndoReport()  # what the last undo did

    @property
    def last_kept(self) -> list[str]:
        """Relative paths the last undo left alone: changed since the agent wrote them."""
        return [k.path for k in self.last.kept]

    @property
    def last_failures(self) -> list[str]:
        """'path: reason' of every file the last undo did not restore."""
        return [f"{k.path}: {KEPT_WHY[k.why]}" for k in self.last.kept] + list(self.last.failed)

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
                small = data if len(data) <= HINT_BYTES else None
                turn.images[p] = replace(turn.images[p], written=digest(data), wrote_data=small)

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
        Files changed since the agent wrote them are kept; ``last`` says which and why."""
        return list(self.undo_report().restored)

    def undo_report(self) -> UndoReport:
        """``undo()``, answering with what it restored, kept and could not restore."""
        with self._lock:
            while self._turns and not self._turns[-1].images:
                self._turns.pop()
            turn = self._turns.pop() if self._turns else _Turn()
        restored: list[str] = []
        kept: list[Kept] = []
        errors: list[str] = []
        failed: dict[Path, PreImage] = {}
        for image in reversed(list(turn.images.values())):
            rel = self._rel(image.path)
            try:
                left = restore(image, rel)
            except OSError as e:
                failed[image.path] = image
                errors.append(f"{rel}: {e.strerror or e}")
                continue
            if left is not None:
                kept.append(left)
            else:
                restored.append(rel)
        if failed:  # keep what could not be restored, so a later undo can retry it
            with self._lock:
                self._turns.append(_Turn(failed))
        self.last = UndoReport(tuple(reversed(restored)), tuple(reversed(kept)), tuple(reversed(errors)))
        return self.last

    def _rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()
