"""Atomic file writes: a temporary file in the same directory, then ``os.replace``.

The file's permission bits are kept; a new file gets the usual ``0o666 & ~umask``.
"""

from __future__ import annotations

import os
import stat
import tempfile
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def current_umask() -> int:
    """The process umask, read without changing it (Linux /proc), else the common 0o022."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically, creating parent directories.

    ``mode`` (permission bits) defaults to the existing file's mode, or ``0o666 & ~umask``.
    """
    path = Path(path)
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~current_umask()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tau-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
