"""Undo of agent edits, turn by turn.

Before a tool writes a file it calls ``journal.record(path)``; the first record of a path in a
turn keeps its pre-image (bytes and mode, or "did not exist"). ``undo()`` puts every file the
last turn touched back as it was, and deletes files (and directories) that turn created.
Files the agent did not write, such as the user's own uncommitted work, are never touched.
"""

from __future__ import annotations

import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path

from tools.atomic import atomic_write


@dataclass(frozen=True)
class PreImage:
    path: Path  # absolute
    content: bytes | None  # None: the file did not exist
    mode: int | None = None
    created_dirs: tuple[Path, ...] = ()  # directories that did not exist yet, deepest first


@dataclass
class _Turn:
    images: dict[Path, PreImage] = field(default_factory=dict)


def capture(path: Path, root: Path) -> PreImage:
    """The current state of ``path`` (pure read)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        missing = []
        parent = path.parent
        while parent != root and parent.is_relative_to(root) and not parent.exists():
            missing.append(parent)
            parent = parent.parent
        return PreImage(path, None, None, tuple(missing))
    return PreImage(path, path.read_bytes(), stat.S_IMODE(st.st_mode))


def restore(image: PreImage) -> None:
    """Put a file back to a captured state."""
    if image.content is None:
        try:
            image.path.unlink()
        except FileNotFoundError:
            pass
        for d in image.created_dirs:
            try:
                d.rmdir()  # only if empty: files the user added there stay
            except OSError:
                break
        return
    atomic_write(image.path, image.content, image.mode)


class UndoJournal:
    """Pre-images of the files the agent wrote, one entry per agent turn."""

    def __init__(self, root: Path | str, max_turns: int = 50) -> None:
        self.root = Path(root).resolve()
        self.max_turns = max_turns
        self._turns: list[_Turn] = []
        self._lock = threading.Lock()
        self.last_failures: list[str] = []  # "path: reason" of files the last undo could not restore

    def begin_turn(self) -> None:
        """Start a new agent turn; later records belong to it."""
        with self._lock:
            if self._turns and not self._turns[-1].images:
                return
            self._turns.append(_Turn())
            del self._turns[: -self.max_turns]

    def record(self, path: Path | str) -> None:
        """Remember ``path``'s state before the agent writes it (first time per turn only)."""
        p = Path(path)
        p = p if p.is_absolute() else self.root / p
        p = p.parent.resolve() / p.name
        if not p.is_relative_to(self.root) or p.is_dir():
            return
        with self._lock:
            if not self._turns:
                self._turns.append(_Turn())
            turn = self._turns[-1]
            if p not in turn.images:
                turn.images[p] = capture(p, self.root)

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
        """Restore the files of the last turn that wrote any; returns their relative paths."""
        with self._lock:
            while self._turns and not self._turns[-1].images:
                self._turns.pop()
            if not self._turns:
                return []
            turn = self._turns.pop()
        restored: list[str] = []
        failed: dict[Path, PreImage] = {}
        self.last_failures = []
        for image in reversed(list(turn.images.values())):
            try:
                restore(image)
            except OSError as e:
                failed[image.path] = image
                self.last_failures.append(f"{self._rel(image.path)}: {e.strerror or e}")
                continue
            restored.append(self._rel(image.path))
        if failed:  # keep what could not be restored, so a later undo can retry it
            with self._lock:
                self._turns.append(_Turn(failed))
        restored.reverse()
        return restored

    def _rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()
