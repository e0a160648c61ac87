"""Standard-library imports a rewritten Python file uses but forgot (``math.ceil`` with no
``import math``): a small model writes the call and drops the import line often enough that
a whole-file rewrite fails on a NameError its own code shows the fix for.

Pure: texts in, texts out. Only names that are standard-library modules, used as ``name.attr``
and bound nowhere in the file are added, so a local variable called ``os`` is never shadowed.
"""

from __future__ import annotations

import ast
import builtins
import sys


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the module binds anywhere: imports, assignments, parameters, definitions."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def missing_stdlib_imports(text: str) -> list[str]:
    """Standard-library modules ``text`` uses as ``module.attr`` without binding them, in order of
    first use; [] when the text does not parse."""
    tree = _parse(text)
    return [] if tree is None else _missing(tree)


def _missing(tree: ast.Module) -> list[str]:
    bound = _bound_names(tree) | set(dir(builtins))
    seen: dict[str, tuple[int, int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and isinstance(node.value.ctx, ast.Load):
            name = node.value.id
            if name in sys.stdlib_module_names and name not in bound:
                seen.setdefault(name, (node.lineno, node.col_offset))
    return sorted(seen, key=seen.__getitem__)


def _insert_at(tree: ast.Module) -> int:
    """The line index (0-based) after the docstring, ``from __future__`` and the first run of imports."""
    at = 0
    body = tree.body
    i = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        at = body[0].end_lineno or 0
        i = 1
    while i < len(body) and isinstance(body[i], ast.Import | ast.ImportFrom):
        at = body[i].end_lineno or at
        i += 1
    return at


def add_missing_imports(text: str, before: str = "") -> tuple[str, list[str]]:
    """``text`` with ``import m`` lines for the standard-library modules it uses but never
    imports (those ``before``, the file as it was, lacked too are left alone: not this edit's
    doing), and the names added (none: ``text`` unchanged)."""
    old = set(missing_stdlib_imports(before)) if before else set()
    tree = _parse(text)
    names = [] if tree is None else [n for n in _missing(tree) if n not in old]
    if tree is None or not names:
        return text, []
    lines = text.splitlines(keepends=True)
    at = _insert_at(tree)
    block = "".join(f"import {n}\n" for n in names)
    if at == 0 and lines and not lines[0].startswith(("import ", "from ")):
        block += "\n"  # an import block of its own above the code
    if at and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    return "".join(lines[:at]) + block + "".join(lines[at:]), names
