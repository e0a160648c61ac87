"""Code a model showed instead of applying: the definitions its answer rewrote.

Small models often end with "here is the corrected code" and a fenced block holding a whole
function, without calling any tool. When such a block (re)defines a top-level function or
class that exists exactly once among the workspace's Python files, the block's definition
can replace the file's. The loop turns these into ordinary edit_file calls, so they pass the
same permission rules and undo journal as any other edit. Test files are never targets: a
shown test is an illustration more often than an intended change.

``shown_edits`` and ``only_quotes`` are pure; ``workspace_texts`` is the thin I/O that feeds them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from app.agent.toolcalls import FENCED  # one fence pattern: blocks pair up in order

_LANGS = ("", "python", "py", "python3")
MAX_FILE_BYTES = 200_000
MAX_FILES = 400


@dataclass(frozen=True)
class ShownEdit:
    path: str
    symbol: str
    search: str  # the definition's lines in the file
    replace: str  # the definition's lines in the answer


def _defs(tree: ast.Module) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out[node.name] = node
    return out


def _segment(text: str, node: ast.stmt) -> str:
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno] + [d.lineno for d in decorators])
    lines = text.splitlines()
    return "\n".join(lines[first - 1 : node.end_lineno])


def is_test_file(path: str) -> bool:
    p = Path(path)
    return p.name.startswith("test_") or p.stem.endswith("_test") or "tests" in p.parts or p.name == "conftest.py"


def shown_edits(reply: str, files: dict[str, str]) -> list[ShownEdit]:
    """Edits that put the answer's Python definitions in place of the files' ones.

    ``files``: workspace-relative path -> text. A definition counts only when its name is
    defined exactly once (top level) across the non-test files, and only when it differs.
    When the answer shows one definition several times, the last one wins.
    """
    parsed: dict[str, tuple[str, dict[str, ast.stmt]]] = {}
    for path, text in files.items():
        if is_test_file(path):
            continue
        try:
            parsed[path] = (text, _defs(ast.parse(text)))
        except (SyntaxError, ValueError):
            continue
    edits: dict[tuple[str, str], ShownEdit] = {}
    for m in FENCED.finditer(reply):
        if m.group(1).lower() not in _LANGS:
            continue
        block = m.group(2)
        try:
            tree = ast.parse(block)
        except (SyntaxError, ValueError):
            continue
        for name, node in _defs(tree).items():
            hits = [(path, defs[name]) for path, (_, defs) in parsed.items() if name in defs]
            if len(hits) != 1:
                continue
            path, old_node = hits[0]
            old = _segment(parsed[path][0], old_node)
            new = _segment(block, node)
            if old.strip() != new.strip():
                edits[(path, name)] = ShownEdit(path, name, old, new)
    return list(edits.values())


def only_quotes(reply: str, files: dict[str, str]) -> bool:
    """Every fenced block of ``reply`` merely quotes the files (each of its lines is in them)."""
    lines = {ln.strip() for text in files.values() for ln in text.splitlines()}
    for m in FENCED.finditer(reply):
        body = [ln.strip() for ln in m.group(2).splitlines() if ln.strip()]
        if body and not all(ln in lines for ln in body):
            return False
    return True


def workspace_texts(root: Path, paths: list[str], suffix: str = "") -> dict[str, str]:
    """The texts of the workspace's files among ``paths`` ending in ``suffix`` (size-capped, text only)."""
    out: dict[str, str] = {}
    for rel in paths:
        if not rel.endswith(suffix) or len(out) >= MAX_FILES:
            continue
        p = root / rel
        try:
            if p.stat().st_size <= MAX_FILE_BYTES:
                out[rel] = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return out
