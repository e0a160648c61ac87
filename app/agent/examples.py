"""The examples a Python docstring gives, as checks an edit must pass.

A docstring that says ``>>> f(2)`` / ``4``, ``f(2) == 4``, ``f(2) -> 4``, ``f(2) ➞ 4`` or
``f(2) returns 4`` states what the function must do; ``tau edit`` runs those examples after a
change (in the shell sandbox, ``app.agent.example_run``) and tells the next try which failed. Only calls
of the function itself with literal arguments and a literal expected value count: prose
around them, and notation such as ``f(abc) => False`` with an unquoted string, is ignored.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_EXAMPLES = 12  # per file: enough to judge, few enough to keep the feedback short
_ARROW = re.compile(r"^\s*(?:[*\-•]\s*|#\s*)?(?P<call>[A-Za-z_]\w*\(.*\))\s*(?:==|->|➞|→|=>|⇒|should\s+return|returns|gives)\s*(?P<want>.+?)\s*\.?$")
_PROMPT = re.compile(r"^\s*>>>\s?(?P<call>.*)$")


@dataclass(frozen=True)
class Example:
    function: str
    call: str  # a Python expression calling the function
    expected: str  # a Python literal
    line: int  # in the file, 1-based


@dataclass(frozen=True)
class ExampleResult:
    example: Example
    ok: bool
    got: str  # repr of the value, or the exception it raised

    def describe(self) -> str:
        return f"{self.example.call} gave {self.got}; the docstring says {self.example.expected}"


def _literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _calls(expr: str, name: str) -> bool:
    """``expr`` calls ``name`` with literal arguments only (``f(abc)`` is notation, not code)."""
    try:
        node = ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError):
        return False
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name):
        return False
    args = [*node.args, *(k.value for k in node.keywords)]
    return all(not isinstance(a, ast.Starred) and _literal(ast.unparse(a)) for a in args)


def _from_docstring(name: str, doc: str, first_line: int) -> list[Example]:
    out: list[Example] = []
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        m = _PROMPT.match(line)
        if m:
            call = m.group("call").strip()
            want = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if _calls(call, name) and want and not want.startswith(">>>") and _literal(want):
                out.append(Example(name, call, want, first_line + i))
            continue
        m = _ARROW.match(line)
        if m and _calls(m.group("call"), name) and _literal(m.group("want")):
            out.append(Example(name, m.group("call"), m.group("want"), first_line + i))
    return out


def find_examples(source: str, names: Iterable[str] | None = None) -> list[Example]:
    """The examples in the docstrings of the module's top-level functions (those in ``names``
    when given); [] when the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    wanted = set(names) if names is not None else None
    out: list[Example] = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        if wanted is not None and node.name not in wanted:
            continue
        doc = ast.get_docstring(node, clean=False)
        if not doc:
            continue
        out += _from_docstring(node.name, doc, node.body[0].lineno)
    unique = {(e.call, e.expected): e for e in reversed(out)}  # the first of equal examples stays
    return sorted(unique.values(), key=lambda e: e.line)[:MAX_EXAMPLES]


def changed_functions(old: str, new: str) -> list[str]:
    """Top-level functions of ``new`` that are new or whose code differs from ``old``'s."""
    try:
        before, after = ast.parse(old), ast.parse(new)
    except (SyntaxError, ValueError):
        return []

    def defs(tree: ast.Module) -> dict[str, str]:
        return {n.name: ast.dump(n) for n in tree.body if isinstance(n, ast.FunctionDef)}

    was = defs(before)
    return [name for name, dump in defs(after).items() if was.get(name) != dump]
