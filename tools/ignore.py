"""A small .gitignore matcher: works in and outside a git repository, no git binary needed.

Reads ``.gitignore`` files (the root's and nested ones) and ``.git/info/exclude``. Supports
negation (``!``), directory-only patterns (``dir/``), anchoring (``/x``, ``a/b``) and ``**``.
A path inside an ignored directory is ignored, as in git.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tools.globs import glob_to_regex

ALWAYS_IGNORED = frozenset({".git"})


@dataclass(frozen=True)
class IgnoreRule:
    base: str  # directory of the .gitignore, workspace-relative POSIX ('' for the root)
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool

    def matches(self, rel: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if self.base:
            if not rel.startswith(self.base + "/"):
                return False
            rel = rel[len(self.base) + 1 :]
        return self.regex.match(rel) is not None


def parse_gitignore(text: str, base: str = "") -> list[IgnoreRule]:
    """Rules of one .gitignore file located in directory ``base``."""
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        # trailing spaces are dropped unless escaped with a backslash
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        body = glob_to_regex(line.lstrip("/"))
        if not anchored:
            body = "(?:.*/)?" + body
        rules.append(IgnoreRule(base, re.compile("^" + body + "$"), negate, dir_only))
    return rules


class IgnoreRules:
    """The ignore rules of a workspace, loading each directory's .gitignore on first use.

    When the workspace is a subdirectory of a git repository, the .gitignore files of the
    directories above it (up to the repository's top) apply too, as in git.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        top = find_repo_top(self.root)
        self.top = top or self.root
        prefix = self.root.relative_to(self.top).as_posix()
        self.prefix = "" if prefix == "." else prefix
        self._rules: list[IgnoreRule] = []
        self._loaded: set[str] = set()
        exclude = self.top / ".git" / "info" / "exclude"
        if exclude.is_file():
            self._rules.extend(parse_gitignore(_read(exclude)))

    def _load_dir(self, rel_dir: str) -> None:
        if rel_dir in self._loaded:
            return
        self._loaded.add(rel_dir)
        f = self.top / rel_dir / ".gitignore" if rel_dir else self.top / ".gitignore"
        if f.is_file():
            self._rules.extend(parse_gitignore(_read(f), rel_dir))

    def _matches(self, rel: str, is_dir: bool) -> bool:
        """``rel`` is workspace-relative; rules are matched against the repository-relative path."""
        parts = rel.split("/")
        if any(p in ALWAYS_IGNORED for p in parts):
            return True
        full = f"{self.prefix}/{rel}" if self.prefix else rel
        full_parts = full.split("/")
        for i in range(len(full_parts)):
            self._load_dir("/".join(full_parts[:i]))
        ignored = False
        for rule in self._rules:
            if rule.matches(full, is_dir):
                ignored = not rule.negate
        return ignored

    def is_ignored(self, rel: str, is_dir: bool = False) -> bool:
        """Whether the workspace-relative POSIX path ``rel`` (or a directory above it) is ignored."""
        rel = rel.strip("/")
        if not rel or rel == ".":
            return False
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if self._matches("/".join(parts[:i]), True):
                return True
        return self._matches(rel, is_dir)

    def is_ignored_direct(self, rel: str, is_dir: bool) -> bool:
        """Like ``is_ignored`` but assumes the parent directories were already checked (walks)."""
        return self._matches(rel, is_dir)


def find_repo_top(path: Path) -> Path | None:
    """The nearest directory at or above ``path`` holding a ``.git`` (directory or file)."""
    for d in (path, *path.parents):
        if (d / ".git").exists():
            return d
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
