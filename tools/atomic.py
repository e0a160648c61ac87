"""Atomic file writes that never follow a symlink: a temporary file in the same directory,
then ``os.replace``, all relative to a directory opened component by component.

Callers pass a resolved path (no symlink in it). Each component is opened with
``O_NOFOLLOW``, so a directory swapped for a symlink after the path was checked (and
approved) makes the write fail instead of landing outside. The file's permission bits are
kept; a new file gets the usual ``0o666 & ~umask``.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class SymlinkSwapped(OSError):
    """A component of a path that was checked became a symlink (or vanished)."""


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


def open_dir_fd(path: Path, create: bool = False) -> int:
    """A file descriptor (the caller closes it) of directory ``path`` (absolute), reached
    without following any symlink; with ``create`` missing directories are made.
    Raises ``SymlinkSwapped``, or FileNotFoundError when a directory is missing."""
    path = Path(path)
    if not path.is_absolute():
        raise ValueError(f"open_dir needs an absolute path, got {path}")
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in path.parts[1:]:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise SymlinkSwapped(
                        e.errno, f"{path} is no longer the directory that was checked: {part} is a symlink or a file"
                    ) from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def open_dir(path: Path, create: bool = False) -> Iterator[int]:
    """``open_dir_fd`` as a context manager that closes the descriptor."""
    fd = open_dir_fd(path, create)
    try:
        yield fd
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` (absolute, resolved) atomically, creating parent directories.

    ``mode`` (permission bits) defaults to the existing file's mode, or ``0o666 & ~umask``.
    """
    path = Path(path)
    with open_dir(path.parent, create=True) as dfd:
        try:
            st: os.stat_result | None = os.stat(path.name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise SymlinkSwapped(errno.ELOOP, f"{path} became a symlink; not written")
        if mode is None:
            mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~current_umask()
        tmp = f".{path.name}.{secrets.token_hex(4)}.tau-tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fchmod(f.fileno(), mode)
                os.fsync(f.fileno())
            os.replace(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except FileNotFoundError:
                pass
            raise


def read_nofollow(path: Path) -> bytes | None:
    """The bytes of regular file ``path`` reached without following a symlink; None when it
    is missing. Raises ``SymlinkSwapped`` when it or a parent is a symlink or not a file."""
    path = Path(path)
    try:
        dfd = open_dir_fd(path.parent)
    except FileNotFoundError:
        return None
    try:
        try:
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=dfd)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise SymlinkSwapped(e.errno, f"{path} is now a symlink") from None
            raise
        with os.fdopen(fd, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, f"{path} is now a directory")
            if not stat.S_ISREG(mode):
                raise SymlinkSwapped(errno.EINVAL, f"{path} is no longer a regular file")
            return f.read()
    finally:
        os.close(dfd)


def unlink_nofollow(path: Path) -> None:
    """Remove ``path`` itself (never what a symlink on the way points to)."""
    path = Path(path)
    with open_dir(path.parent) as dfd:
        os.unlink(path.name, dir_fd=dfd)


def rmdir_nofollow(path: Path) -> None:
    """Remove empty directory ``path``; a symlink on the way raises ``SymlinkSwapped``."""
    path = Path(path)
    with open_dir(path.parent) as dfd:
        os.rmdir(path.name, dir_fd=dfd)
