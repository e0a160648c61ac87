"""Which edit format a file gets, and how a whole-file reply is checked before it replaces one.

Small files are rewritten whole: a small model writes a function better as part of the file
than as a SEARCH/REPLACE patch on ``raise NotImplementedError`` (which invites one-liners),
and the n-gram overlay drafts the unchanged lines from the registered file, so a rewrite
costs little more than its changed lines. Beyond the limits below a rewrite gets slow and
risks elisions, so larger files get SEARCH/REPLACE blocks (``edit_file`` in the agent).

Pure: callers pass texts and a token counter.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

WHOLE = "whole"
SEARCH_REPLACE = "search-replace"
WHOLE_MAX_LINES = 200  # a rewrite of this many lines took about a minute at 1.5B on two cores
WHOLE_MAX_TOKENS = 2500

# "# ... rest of the code unchanged", "// existing code ...": a rewrite that skips lines
_ELISION = re.compile(
    r"^\s*(?:#|//|/\*|<!--|--)?\s*(?:\.\.\.|…)?\s*\(?\s*"
    r"(?:rest|remaining|existing|unchanged|other|previous|same)\b[^\n]{0,60}"
    r"(?:unchanged|code|here|as before|functions?|lines?|methods?|file)\b",
    re.I | re.M,
)


def whole_fits(text: str, count: Callable[[str], int] | None = None) -> bool:
    """Is ``text`` small enough to be rewritten whole?"""
    if text.count("\n") > WHOLE_MAX_LINES:
        return False
    return count is None or count(text) <= WHOLE_MAX_TOKENS


def choose_format(texts: Sequence[str], count: Callable[[str], int] | None = None) -> str:
    """WHOLE when every file is small, else SEARCH_REPLACE (one format per reply)."""
    return WHOLE if texts and all(whole_fits(t, count) for t in texts) else SEARCH_REPLACE


def elided(old: str, new: str) -> str | None:
    """The line of ``new`` that stands for skipped code ("... rest unchanged"), if any."""
    known = {ln.strip() for ln in old.splitlines()}
    for m in _ELISION.finditer(new):
        line = m.group(0).strip()
        if line not in known:
            return line
    return None


def _imports(tree: ast.Module) -> list[ast.stmt]:
    return [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]


def _defs(tree: ast.Module) -> dict[str, ast.stmt]:
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def _span(node: ast.stmt) -> tuple[int, int]:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators]) - 1, int(node.end_lineno or node.lineno)


def merge_partial(old: str, new: str) -> str | None:
    """When a "whole file" reply is only part of a Python file (the changed functions, the
    file's imports left out), the file with those definitions put in place; None when ``new``
    reads as the whole file (or either text is not Python)."""
    try:
        old_tree, new_tree = ast.parse(old), ast.parse(new)
    except (SyntaxError, ValueError):
        return None
    old_defs, new_defs = _defs(old_tree), _defs(new_tree)
    old_imports = {ast.get_source_segment(old, n) for n in _imports(old_tree)}
    new_imports = {ast.get_source_segment(new, n) for n in _imports(new_tree)}
    lost_imports = bool(old_imports) and not old_imports & new_imports
    shared = set(new_defs) & set(old_defs)
    missing = set(old_defs) - set(new_defs)
    shorter = len(new.splitlines()) * 2 <= len(old.splitlines())
    if not shared or not (lost_imports or (missing and shorter and set(new_defs) <= set(old_defs))):
        return None
    return merge_definitions(old, new)


def merge_definitions(old: str, new: str) -> str | None:
    """``old`` with each top-level definition of ``new`` put in place of its namesake (new ones
    appended) and ``new``'s extra imports on top; None when either is not Python."""
    try:
        old_tree, new_tree = ast.parse(old), ast.parse(new)
    except (SyntaxError, ValueError):
        return None
    old_defs = _defs(old_tree)
    old_imports = {ast.get_source_segment(old, n) for n in _imports(old_tree)}
    lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    placed = []
    for name, node in _defs(new_tree).items():
        a, b = _span(node)
        body = "".join(new_lines[a:b])
        body = body if body.endswith("\n") else body + "\n"
        if name in old_defs:
            placed.append((*_span(old_defs[name]), body))
        else:
            placed.append((len(lines), len(lines), "\n\n" + body))
    for a, b, body in sorted(placed, key=lambda t: t[:2], reverse=True):
        lines[a:b] = [body]
    extra = sorted(i for n in _imports(new_tree) if (i := ast.get_source_segment(new, n)) and i not in old_imports)
    return "".join(i + "\n" for i in extra) + "".join(lines)


def agent_rule(tool_names: Sequence[str]) -> str:
    """The system prompt's line on which edit tool to use for which file size."""
    if "write_file" not in tool_names or "edit_file" not in tool_names:
        return ""
    return (f"\n- Which edit format: to change a file of up to {WHOLE_MAX_LINES} lines, write its path on one"
            " line, then the whole new file in a fenced code block (every line, whole functions): tau applies"
            " it as write_file. Use edit_file for longer files.")
