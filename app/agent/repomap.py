"""A compact repository map: the file tree with each file's top-level symbols, capped in size.

Python symbols come from ``ast``; other languages from simple per-language regexes.
Files come from ``git ls-files`` when the workspace is a git repository, else from a walk
that skips hidden, vendored and build folders.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from app.agent.confined import read_confined
from tools.gitcmd import GitUnavailable, nul_split, run_git

SKIP_DIRS = {"node_modules", "__pycache__", "venv", ".venv", "build", "dist", "target", "vendor", "site-packages"}
MAX_FILE_BYTES = 200_000
MAX_FILES = 2000

_REGEXES: dict[str, list[re.Pattern[str]]] = {
    "js": [
        re.compile(r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\*?\s+([A-Za-z_$][\w$]*)", re.M),
        re.compile(r"^(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)", re.M),
        re.compile(r"^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?\(", re.M),
        re.compile(r"^(?:export\s+)?(?:interface|type|enum)\s+([A-Za-z_$][\w$]*)", re.M),
    ],
    "go": [re.compile(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)", re.M), re.compile(r"^type\s+([A-Za-z_]\w*)", re.M)],
    "rs": [
        re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+([A-Za-z_]\w*)", re.M),
        re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|type|mod)\s+([A-Za-z_]\w*)", re.M),
    ],
    "c": [
        re.compile(r"^(?:class|struct|enum|namespace)\s+([A-Za-z_]\w*)", re.M),
        re.compile(r"^[A-Za-z_][\w\s\*&:<>,]*?\b([A-Za-z_]\w*)\s*\([^;]*$", re.M),
    ],
    "java": [
        re.compile(r"^\s*(?:public|private|protected)?\s*(?:abstract\s+|final\s+|static\s+)*(?:class|interface|enum|record)\s+([A-Za-z_]\w*)", re.M),
    ],
    "rb": [re.compile(r"^\s*(?:def|class|module)\s+([A-Za-z_][\w.?!]*)", re.M)],
    "sh": [re.compile(r"^(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)\s*\{", re.M)],
}
_EXT_LANG = {
    ".js": "js", ".jsx": "js", ".ts": "js", ".tsx": "js", ".mjs": "js", ".cjs": "js",
    ".go": "go", ".rs": "rs", ".c": "c", ".h": "c", ".cc": "c", ".cpp": "c", ".hpp": "c",
    ".java": "java", ".kt": "java", ".cs": "java", ".rb": "rb", ".sh": "sh", ".bash": "sh",
}
_C_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "else"}


def is_source(path: str) -> bool:
    """A program's source file (by extension): Python or a language the map reads symbols of."""
    suffix = Path(path).suffix.lower()
    return suffix == ".py" or suffix in _EXT_LANG


def list_files(root: Path) -> list[str]:
    """Workspace-relative paths of the project's files (git's view when it is a repository)."""
    try:
        out = run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", timeout=10, check=True).stdout
        files = sorted({line for line in nul_split(out) if (root / line).is_file()})
        if files or (root / ".git").exists():
            return files[:MAX_FILES]
    except (OSError, GitUnavailable):
        pass
    found: list[str] = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if any(part.startswith(".") or part in SKIP_DIRS for part in rel.parts):
            continue
        if p.is_file():
            found.append(rel.as_posix())
            if len(found) >= MAX_FILES:
                break
    return found


def python_symbols(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[str] = []
    for node in tree.body:
        if getattr(node, "name", "").startswith("_"):
            continue
        if isinstance(node, ast.ClassDef):
            methods = [n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            public = [m for m in methods if not m.startswith("_")]
            out.append(f"class {node.name}" + (f"({', '.join(public[:8])})" if public else ""))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(f"def {node.name}")
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.isupper() and not name.startswith("_"):
                out.append(name)
    return out


def regex_symbols(source: str, lang: str) -> list[str]:
    seen: list[str] = []
    for rx in _REGEXES.get(lang, []):
        for m in rx.finditer(source):
            name = m.group(1)
            if lang == "c" and name in _C_KEYWORDS:
                continue
            if name not in seen:
                seen.append(name)
    return seen


def file_symbols(root: Path, rel: str) -> list[str]:
    """Top-level symbols of workspace file ``rel`` (none through a symlink out or from a secret file)."""
    suffix = Path(rel).suffix
    lang = "py" if suffix == ".py" else _EXT_LANG.get(suffix)
    if lang is None:
        return []
    source = read_confined(root, rel, MAX_FILE_BYTES, errors="replace")
    if source is None:
        return []
    return python_symbols(source) if lang == "py" else regex_symbols(source, lang)


def repo_map(root: Path, max_chars: int = 4000) -> str:
    """One line per file, ``path: sym1, sym2``; files past ``max_chars`` are summarised by count."""
    lines: list[str] = []
    used = 0
    files = list_files(root)
    for i, rel in enumerate(files):
        syms = file_symbols(root, rel)
        line = rel + (": " + ", ".join(syms) if syms else "")
        if len(line) > 200:
            line = line[:197] + "..."
        if used + len(line) + 1 > max_chars:
            lines.append(f"... and {len(files) - i} more files")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)
