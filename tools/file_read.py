"""read_file: a text file (or a line range of it), size-capped; binary files are refused."""

from __future__ import annotations

from difflib import get_close_matches
from itertools import islice
from typing import Any

from tools.base import ToolContext, ToolResult
from tools.ignore import IgnoreRules
from tools.permissions_types import ApprovalRequest
from tools.secret_files import is_secret_path
from tools.textio import NotText, decode
from tools.toolkit import BaseTool, ToolError, arg_int, arg_str, ask, workspace_path
from tools.walk import iter_files

MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_READ_CHARS = 40_000
MAX_SUGGEST_SCAN = 20_000


def select_lines(text: str, start: int | None, end: int | None, max_chars: int = MAX_READ_CHARS) -> tuple[str, int, int, int, bool]:
    """(body, first, last, total, truncated) of lines ``start``..``end`` (1-based, inclusive)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    total = len(lines)
    if total == 0:
        return "", 0, 0, 0, False
    first = max(1, start or 1)
    last = total if end is None or end <= 0 else min(end, total)
    if first > total:
        raise ToolError(f"start_line {first} is past the end of the file ({total} lines)")
    if last < first:
        raise ToolError(f"end_line {end} is before start_line {first}")
    out: list[str] = []
    size = 0
    truncated = False
    for k in range(first, last + 1):
        line = lines[k - 1]
        if out and size + len(line) + 1 > max_chars:
            truncated = True
            last = k - 1
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out), first, last, total, truncated


def did_you_mean(ctx: ToolContext, rel: str, limit: int = 3) -> str:
    """'; did you mean: a, b?' naming workspace files with a similar path or name ('' if none)."""
    files = [f.rel for f in islice(iter_files(ctx.root, ctx.root), MAX_SUGGEST_SCAN)]
    by_name: dict[str, list[str]] = {}
    for f in files:
        by_name.setdefault(f.rsplit("/", 1)[-1], []).append(f)
    name = rel.rsplit("/", 1)[-1]
    close = get_close_matches(rel, files, n=limit, cutoff=0.8)
    for match in get_close_matches(name, list(by_name), n=limit, cutoff=0.85):
        close.extend(f for f in by_name[match] if f not in close)
    return f"; did you mean: {', '.join(close[:limit])}?" if close else ""


class ReadFile(BaseTool):
    name = "read_file"
    description = (
        "Read a text file of the workspace. Optional start_line/end_line (1-based, inclusive) "
        "read part of a long file."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "file path relative to the workspace root"},
            "start_line": {"type": "integer", "description": "first line to read (1-based)"},
            "end_line": {"type": "integer", "description": "last line to read (inclusive)"},
        },
        "required": ["path"],
    }
    kind = "read"

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, rel = workspace_path(ctx, arg_str(args, "path", required=True))
        if path.is_dir():
            raise ToolError(f"{rel} is a directory; use list_files to see its files")
        if not path.exists():
            raise ToolError(f"file not found: {rel}{did_you_mean(ctx, rel)}")
        if not path.is_file():
            raise ToolError(f"{rel} is not a regular file")
        if is_secret_path(rel):
            rejection = ask(
                ctx,
                ApprovalRequest(
                    kind="read-secret",
                    tool=self.name,
                    summary=f"read {rel} (may hold secrets)",
                    path=rel,
                ),
            )
            if rejection is not None:
                return ToolResult(
                    ok=False,
                    output=f"{rejection.output}. {rel} may hold secrets (keys, passwords); "
                    "reading it needs the user's approval. Do not try to read it another way.",
                )
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ToolError(
                f"{rel} is too large to read ({size} bytes, limit {MAX_FILE_BYTES}); "
                "use grep to find the lines you need"
            )
        try:
            decoded = decode(path.read_bytes())
        except NotText:
            raise ToolError(f"{rel} is a binary file ({size} bytes); read_file only shows text files") from None
        start, end = arg_int(args, "start_line"), arg_int(args, "end_line")
        body, first, last, total, truncated = select_lines(decoded.text, start, end)
        if total == 0:
            header = f"{rel} (empty file)"
        elif first == 1 and last == total:
            header = f"{rel} ({total} lines)"
        else:
            header = f"{rel} (lines {first}-{last} of {total})"
        notes = []
        if IgnoreRules(ctx.root).is_ignored(rel):
            notes.append("note: this file is ignored by .gitignore")
        if truncated:
            notes.append(f"[truncated; continue with start_line={last + 1}]")
        output = "\n".join([header, body, *notes]) if body else "\n".join([header, *notes])
        return ToolResult(ok=True, output=output, paths=(rel,))
