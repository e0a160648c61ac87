"""Glob patterns (gitignore flavour: ``*``, ``?``, ``[...]``, ``**``) compiled to regular expressions."""

from __future__ import annotations

import re
from functools import lru_cache


def glob_to_regex(pattern: str) -> str:
    """Regex source (no anchors) for a slash-separated glob.

    ``*`` and ``?`` never cross ``/``; ``**/`` matches zero or more directories, a trailing
    ``/**`` everything below, and ``[...]`` / ``[!...]`` are character classes.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            stars = j - i
            at_seg_start = i == 0 or pattern[i - 1] == "/"
            at_seg_end = j == n or pattern[j] == "/"
            if stars >= 2 and at_seg_start and at_seg_end:
                if j == n:
                    out.append(".*")  # 'a/**' -> everything inside a/
                    i = j
                else:
                    out.append("(?:.*/)?")  # '**/' -> zero or more directories
                    i = j + 1
                continue
            out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : j]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def expand_braces(pattern: str) -> list[str]:
    """Expand ``{a,b}`` alternatives (``*.{ts,tsx}`` -> ``*.ts``, ``*.tsx``); nesting is supported."""
    depth = 0
    start = -1
    for i, c in enumerate(pattern):
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                body = pattern[start + 1 : i]
                parts = _split_top(body)
                if len(parts) < 2:
                    continue
                head, tail = pattern[:start], pattern[i + 1 :]
                return [x for p in parts for x in expand_braces(head + p + tail)]
    return [pattern]


def _split_top(body: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for c in body:
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        depth += c == "{"
        depth -= c == "}"
        cur.append(c)
    parts.append("".join(cur))
    return parts


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A search-style glob: without a ``/`` it matches the file name at any depth
    (``*.py``), with one it matches the whole relative path (``src/**/*.py``)."""
    alts = []
    for p in expand_braces(pattern.strip()):
        p = p.lstrip("/")
        if p.startswith("./"):
            p = p[2:]
        body = glob_to_regex(p)
        alts.append(body if "/" in p else "(?:.*/)?" + body)
    return re.compile("^(?:" + "|".join(alts) + ")$")


def glob_match(pattern: str, rel_path: str) -> bool:
    return compile_glob(pattern).match(rel_path) is not None
