"""Walk the workspace's files the way git sees them: ignored paths and .git are skipped,
symlinks that lead outside the workspace are never followed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tools.globs import compile_glob
from tools.ignore import IgnoreRules


@dataclass(frozen=True)
class WalkedFile:
    path: Path  # absolute
    rel: str  # workspace-relative POSIX


def iter_files(
    root: Path,
    start: Path,
    pattern: str | None = None,
    rules: IgnoreRules | None = None,
) -> Iterator[WalkedFile]:
    """Files under ``start`` (absolute, inside ``root``), sorted, honouring .gitignore.

    ``pattern`` is a glob: ``*.py`` matches names at any depth, ``src/**/*.py`` whole paths
    (relative to ``start`` or to the root).
    """
    root = Path(root).resolve()
    rules = rules or IgnoreRules(root)
    rx = compile_glob(pattern) if pattern else None
    start_rel = _rel(root, start)

    def wanted(rel: str) -> bool:
        if rx is None:
            return True
        if rx.match(rel):
            return True
        if start_rel and rel.startswith(start_rel + "/"):
            return rx.match(rel[len(start_rel) + 1 :]) is not None
        return False

    if start.is_file():
        rel = _rel(root, start)
        if not rules.is_ignored(rel) and wanted(rel):
            yield WalkedFile(start, rel)
        return
    if start_rel and rules.is_ignored(start_rel, True):
        return
    for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
        d = Path(dirpath)
        drel = _rel(root, d)
        keep = []
        for name in sorted(dirnames):
            rel = f"{drel}/{name}" if drel else name
            if (d / name).is_symlink() or rules.is_ignored_direct(rel, True):
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            rel = f"{drel}/{name}" if drel else name
            p = d / name
            if rules.is_ignored_direct(rel, False) or not wanted(rel):
                continue
            if p.is_symlink():
                try:
                    target = p.resolve()
                    if not target.is_relative_to(root) or not target.is_file():
                        continue
                except (RuntimeError, OSError):  # a symlink loop: skip this entry, not the walk
                    continue
            elif not p.is_file():  # FIFOs, sockets, devices: reading them could block
                continue
            yield WalkedFile(p, rel)


def _rel(root: Path, p: Path) -> str:
    rel = Path(p).relative_to(root).as_posix()
    return "" if rel == "." else rel
