"""list_files and grep: find files and lines in the workspace, honouring .gitignore."""

from __future__ import annotations

import time
from itertools import islice
from pathlib import Path
from typing import Any

import regex

from tools.base import ToolContext, ToolResult
from tools.cancel import is_cancelled
from tools.paths import relative
from tools.secret_files import is_secret_path
from tools.textio import NotText, decode
from tools.toolkit import BaseTool, ToolError, arg_str, workspace_path
from tools.walk import iter_files

MAX_LIST = 500
MAX_LIST_SCAN = 50_000
MAX_MATCHES = 200
MAX_LINE_CHARS = 300
MAX_GREP_FILE_BYTES = 2 * 1024 * 1024
MAX_GREP_FILES = 20_000
GREP_FILE_SECONDS = 2.0  # a catastrophic pattern stops on a file after this long
CANCEL_EVERY_LINES = 1000
MAX_SLOW_FILES = 3  # then the search stops: the pattern is the problem, not the file


def _start(ctx: ToolContext, raw: str) -> tuple[Path, str]:
    path, rel = workspace_path(ctx, raw or ".")
    if not path.exists():
        raise ToolError(f"path not found: {rel}")
    return path, rel


def _secret(ctx: ToolContext, path: Path, rel: str) -> bool:
    """A secret file by its name, or by what a symlink to it resolves to (a loop counts as secret:
    it cannot be read anyway)."""
    if is_secret_path(rel):
        return True
    if not path.is_symlink():
        return False
    try:
        return is_secret_path(relative(ctx.root, path.resolve()))
    except (RuntimeError, OSError, ValueError):
        return True


class ListFiles(BaseTool):
    name = "list_files"
    description = (
        "List files under a directory (default: the whole workspace), skipping .gitignore'd ones. "
        "Optional glob pattern, e.g. '*.py' or 'src/**/*.ts'."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "directory relative to the workspace root"},
            "pattern": {"type": "string", "description": "glob filter, e.g. '*.py'"},
        },
        "required": [],
    }
    kind = "read"

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw_path = arg_str(args, "path")
        pattern = arg_str(args, "pattern") or None
        if pattern is None and any(c in raw_path for c in "*?[{"):
            raw_path, pattern = "", raw_path  # a glob passed as the path
        start, rel = _start(ctx, raw_path)
        files: list[str] = []
        more = 0
        for f in islice(iter_files(ctx.root, start, pattern), MAX_LIST_SCAN):
            if is_cancelled(ctx.cancel):
                return ToolResult(ok=False, output="list_files cancelled by the user")
            if len(files) < MAX_LIST:
                files.append(f.rel)
            else:
                more += 1
        if not files:
            what = f" matching {pattern!r}" if pattern else ""
            return ToolResult(ok=True, output=f"no files{what} under {rel}")
        out = "\n".join(files)
        if more:
            out += f"\n[{more} more files not shown; narrow the path or pattern]"
        return ToolResult(ok=True, output=out)


class Grep(BaseTool):
    name = "grep"
    description = (
        "Search file contents with a Python regular expression; prints path:line: text for each "
        "matching line. Optional path (file or directory) and glob (e.g. '*.py')."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "regular expression"},
            "path": {"type": "string", "description": "file or directory to search (default: workspace)"},
            "glob": {"type": "string", "description": "only files matching this glob, e.g. '*.py'"},
        },
        "required": ["pattern"],
    }
    kind = "read"

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = arg_str(args, "pattern", required=True)
        try:
            rx = regex.compile(raw)
        except (regex.error, ValueError, OverflowError, RecursionError) as e:
            raise ToolError(f"invalid regular expression {raw!r}: {e}") from None
        start, _rel = _start(ctx, arg_str(args, "path"))
        glob = arg_str(args, "glob") or None
        hits: list[str] = []
        files_hit: set[str] = set()
        scanned = skipped_secret = 0
        more = 0
        slow: list[str] = []
        cancelled = False
        for f in iter_files(ctx.root, start, glob):
            if scanned >= MAX_GREP_FILES:
                break
            if is_cancelled(ctx.cancel):
                cancelled = True
                break
            if _secret(ctx, f.path, f.rel):
                skipped_secret += 1
                continue
            try:
                if f.path.stat().st_size > MAX_GREP_FILE_BYTES:
                    continue
                text = decode(f.path.read_bytes()).text
            except (NotText, OSError):
                continue
            scanned += 1
            deadline = time.monotonic() + GREP_FILE_SECONDS
            for n, line in enumerate(text.split("\n"), 1):
                if n % CANCEL_EVERY_LINES == 0 and is_cancelled(ctx.cancel):
                    cancelled = True
                    break
                try:
                    found = rx.search(line, timeout=max(0.001, deadline - time.monotonic()))
                except TimeoutError:
                    slow.append(f"{f.rel}:{n}")
                    break
                if found:
                    files_hit.add(f.rel)
                    if len(hits) < MAX_MATCHES:
                        shown = line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " [...]"
                        hits.append(f"{f.rel}:{n}: {shown}")
                    else:
                        more += 1
            if cancelled or is_cancelled(ctx.cancel):
                cancelled = True
                break
            if len(slow) >= MAX_SLOW_FILES:
                break
        notes = []
        if cancelled:
            notes.append("[grep cancelled by the user; results so far]")
        if slow:
            notes.append(
                f"[the pattern took over {GREP_FILE_SECONDS:g}s on {len(slow)} file(s) and was stopped there "
                f"(first at {slow[0]}); simplify it (nested repeats like (a+)* backtrack)]"
            )
        if more:
            notes.append(f"[{more} more matches not shown; narrow the pattern, path or glob]")
        if skipped_secret:
            notes.append(f"[{skipped_secret} file(s) that may hold secrets were not searched]")
        if not hits:
            return ToolResult(ok=True, output="\n".join([f"no matches for {raw!r} ({scanned} files searched)", *notes]))
        total = len(hits) + more
        header = f"{total} matching line(s) in {len(files_hit)} file(s)"
        return ToolResult(ok=True, output="\n".join([header, *hits, *notes]), paths=tuple(sorted(files_hit)))
