"""Code a model showed instead of applying: the definitions its answer rewrote.

Small models often end with "here is the corrected code" and a fenced block holding a whole
function, without calling any tool. When such a block (re)defines a top-level function or
class that exists exactly once among the workspace's Python files, the block's definition
can replace the file's; a block right after a line naming a workspace file that holds most of
that file, changed, is a whole-file rewrite. The loop turns these into ordinary edit_file and
write_file calls, so they pass the same approval, permission rules and undo journal as any
other edit. Test files are never targets: a shown test is an illustration more often than an
intended change.

``shown_edits`` and ``only_quotes`` are pure; ``workspace_texts`` is the thin I/O that feeds them.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from app.agent.confined import read_confined
from app.agent.toolcalls import FENCED, ToolCall  # one fence pattern: blocks pair up in order

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


_TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec"})
# JUnit's and NUnit's class names (Maven's default includes): TestFoo, FooTest, FooTests, FooTestCase
_CAMEL_TEST = re.compile(r"^Test([A-Z0-9_]|$)|.(Test|Tests|TestCase)$")


def is_test_file(path: str) -> bool:
    """test_x.py, x_test.go, x_spec.rb, x.test.ts, x.spec.js, conftest.py, TestX.java, XTest.kt,
    XTests.cs, or a file under tests/, test/, __tests__/ or spec/."""
    p = Path(path.replace("\\", "/"))
    return (p.name.startswith("test_") or p.stem.endswith(("_test", "_spec")) or p.name == "conftest.py"
            or bool(_CAMEL_TEST.search(p.stem))
            or bool({".test", ".spec"} & set(p.suffixes[:-1])) or bool(_TEST_DIRS & set(p.parts[:-1])))


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


WHOLE_SHARE = 0.6  # a block is "the file" when it has at least this share of the file's lines, similar


def _named_file(prose: str, paths: list[str]) -> str | None:
    """The workspace file the last line before a fence names ("Here is the fixed calc.py:")."""
    lines = [ln for ln in prose.splitlines() if ln.strip()]
    if not lines:
        return None
    last = lines[-1]
    found = [(m.start(), p) for p in paths for m in re.finditer(rf"(?<![\w/.-]){re.escape(p)}(?![\w/-])", last)]
    return max(found)[1] if found else None


def shown_rewrites(reply: str, files: dict[str, str]) -> dict[str, str]:
    """Whole files the reply shows changed: path -> new text. A fence counts when the line
    before it names a workspace file and the block is most of that file, not equal to it."""
    out: dict[str, str] = {}
    paths = sorted(files, key=len, reverse=True)
    for m in FENCED.finditer(reply):
        path = _named_file(reply[: m.start()], paths)
        if path is None or is_test_file(path):
            continue
        new = m.group(2)
        if _whole_like(files[path], new):
            out[path] = new if new.endswith("\n") else new + "\n"
    return out


def _whole_like(old: str, new: str) -> bool:
    a = [ln.strip() for ln in old.splitlines() if ln.strip()]
    b = [ln.strip() for ln in new.splitlines() if ln.strip()]
    if not a or not b or a == b or len(b) < WHOLE_SHARE * len(a):
        return False
    ratio = SequenceMatcher(None, a, b, autojunk=False).ratio()
    return ratio >= 0.5


def only_quotes(reply: str, files: dict[str, str]) -> bool:
    """Every fenced block of ``reply`` merely quotes the files (each of its lines is in them)."""
    lines = {ln.strip() for text in files.values() for ln in text.splitlines()}
    for m in FENCED.finditer(reply):
        body = [ln.strip() for ln in m.group(2).splitlines() if ln.strip()]
        if body and not all(ln in lines for ln in body):
            return False
    return True


def workspace_texts(root: Path, paths: list[str], suffix: str = "") -> dict[str, str]:
    """The texts of the workspace's files among ``paths`` ending in ``suffix`` (size-capped, text
    only, confined to the workspace and never a secret file)."""
    out: dict[str, str] = {}
    for rel in paths:
        if not rel.endswith(suffix) or len(out) >= MAX_FILES:
            continue
        text = read_confined(root, rel, MAX_FILE_BYTES)
        if text is not None:
            out[rel] = text
    return out


def shown_calls(reply: str, texts: dict[str, str], tools: set[str]) -> list[ToolCall]:
    """The edit calls the reply's shown code stands for: edit_file for each Python definition it
    rewrote, write_file for a whole file it showed changed (where no definition covers it)."""
    calls: list[ToolCall] = []
    covered: set[str] = set()
    if "edit_file" in tools:
        py = {p: t for p, t in texts.items() if p.endswith(".py")}
        for e in shown_edits(reply, py):
            calls.append(ToolCall("edit_file", {"path": e.path, "search": e.search, "replace": e.replace}))
            covered.add(e.path)
    if "write_file" in tools:
        for path, new in shown_rewrites(reply, texts).items():
            if path not in covered:
                calls.append(ToolCall("write_file", {"path": path, "content": new}))
    return calls
