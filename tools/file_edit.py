"""write_file and edit_file: change text files atomically, keeping encoding, line ends and
mode; every change is shown as a unified diff, approved per the permission mode and journaled
for undo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.atomic import atomic_write
from tools.base import ToolContext, ToolResult
from tools.capping import cap_text
from tools.diffs import diff_stats, make_diff
from tools.matching import apply_edit
from tools.permissions_types import ApprovalRequest
from tools.pysyntax import broke_python
from tools.secret_files import is_secret_path
from tools.textio import DecodedText, NotText, TextFormat, Unencodable, decode, encode, normalize_newlines
from tools.toolkit import (
    BaseTool,
    ToolError,
    arg_bool,
    arg_int,
    arg_str,
    ask,
    record_write,
    record_written,
    refuse_git_internals,
    workspace_path,
)

MAX_EDIT_BYTES = 10 * 1024 * 1024
MAX_DIFF_SHOWN = 8_000


def load_text(path: Path, rel: str) -> DecodedText:
    size = path.stat().st_size
    if size > MAX_EDIT_BYTES:
        raise ToolError(f"{rel} is too large to edit ({size} bytes)")
    try:
        return decode(path.read_bytes())
    except NotText:
        raise ToolError(f"{rel} is a binary file; only text files can be edited") from None


def _target(ctx: ToolContext, raw: str) -> tuple[Path, str]:
    path, rel = workspace_path(ctx, raw)
    refuse_git_internals(ctx.root, rel)
    if path.is_dir():
        raise ToolError(f"{rel} is a directory")
    if path.exists() and not path.is_file():
        raise ToolError(f"{rel} is not a regular file")
    return path, rel


def secret_gate(ctx: ToolContext, tool: str, path: Path, rel: str) -> ToolResult | None:
    """Before a tool reads an existing secret file to change it, the user approves the read:
    no answer about its content (not even "no changes" or "not found") comes earlier."""
    if not is_secret_path(rel) or not path.exists():
        return None
    request = ApprovalRequest(
        kind="read-secret", tool=tool, summary=f"read {rel} (may hold secrets) to change it", path=rel
    )
    rejection = ask(ctx, request)
    if rejection is None:
        return None
    return ToolResult(
        ok=False,
        output=f"{rejection.output}. {rel} may hold secrets (keys, passwords); changing it needs the user's approval",
    )


def apply_change(
    ctx: ToolContext,
    tool: str,
    path: Path,
    rel: str,
    old: str | None,
    new: str,
    fmt: TextFormat,
    note: str = "",
    show_diff: bool = False,
) -> ToolResult:
    """Diff, approve, journal and atomically write ``new`` (``old`` None: a new file)."""
    diff = make_diff(rel, old or "", new)
    if old is not None and not diff:
        return ToolResult(ok=True, output=f"no changes: {rel} already has this content", paths=(rel,))
    try:
        data = encode(new, fmt)
    except Unencodable as e:
        raise ToolError(f"cannot write {rel}: {e}") from None
    verb = "create" if old is None else "edit"
    rejection = ask(ctx, ApprovalRequest(kind="edit", tool=tool, summary=f"{verb} {rel}", diff=diff, path=rel))
    if rejection is not None:
        return rejection
    if workspace_path(ctx, rel)[0] != path:  # the approval took time: is it still the same file?
        raise ToolError(f"{rel} was moved or replaced by a symlink while waiting for approval; not written")
    record_write(ctx, path)
    atomic_write(path, data)
    record_written(ctx, path, data)
    added, removed = diff_stats(diff)
    lines = [f"{'created' if old is None else 'edited'} {rel} (+{added} -{removed})"]
    if note:
        lines.append(note)
    broken = broke_python(rel, old, new)
    if broken is not None:  # written as asked, but the model should know before it runs anything
        lines.append(f"warning: {rel} no longer parses as Python ({broken})")
    if show_diff and not is_secret_path(rel):
        lines.append(cap_text(diff, MAX_DIFF_SHOWN))
    return ToolResult(ok=True, output="\n".join(lines), diff=diff, paths=(rel,))


class WriteFile(BaseTool):
    name = "write_file"
    description = "Create a file or replace a file's whole content."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "file path relative to the workspace root"},
            "content": {"type": "string", "description": "the complete new content of the file"},
        },
        "required": ["path", "content"],
    }
    kind = "edit"

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, rel = _target(ctx, arg_str(args, "path", required=True))
        content = normalize_newlines(arg_str(args, "content", required=True))
        gate = secret_gate(ctx, self.name, path, rel)
        if gate is not None:
            return gate
        if path.exists():
            decoded = load_text(path, rel)
            return apply_change(ctx, self.name, path, rel, decoded.text, content, decoded.fmt)
        return apply_change(ctx, self.name, path, rel, None, content, TextFormat())


class EditFile(BaseTool):
    name = "edit_file"
    description = (
        "Replace text in a file: search is the exact current text (a few whole lines, unique "
        "in the file), replace the new text. replace_all: every occurrence; occurrence: the N-th."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "file path relative to the workspace root"},
            "search": {"type": "string", "description": "existing text to replace, copied from the file"},
            "replace": {"type": "string", "description": "text to put in its place"},
            "replace_all": {
                "type": "boolean",
                "description": "replace every exact occurrence of search (default false)",
            },
            "occurrence": {
                "type": "integer",
                "minimum": 1,
                "description": "replace only this occurrence of search, counted from 1 in file order",
            },
        },
        "required": ["path", "search", "replace"],
    }
    kind = "edit"

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, rel = _target(ctx, arg_str(args, "path", required=True))
        search = normalize_newlines(arg_str(args, "search", required=True))
        replace = normalize_newlines(arg_str(args, "replace", required=False))
        replace_all = arg_bool(args, "replace_all")
        occurrence = arg_int(args, "occurrence")
        if replace_all and occurrence is not None:
            raise ToolError("give replace_all or occurrence, not both")
        if not path.exists():
            raise ToolError(f"file not found: {rel}; use write_file to create it")
        gate = secret_gate(ctx, self.name, path, rel)
        if gate is not None:
            return gate
        decoded = load_text(path, rel)
        outcome = apply_edit(decoded.text, search, replace, rel, replace_all=replace_all, occurrence=occurrence)
        if not outcome.ok or outcome.new_text is None:
            if is_secret_path(rel):
                return ToolResult(
                    ok=False,
                    output=f"search text not found exactly once in {rel} "
                    "(contents not shown: the file may hold secrets)",
                )
            return ToolResult(ok=False, output=outcome.message)
        return apply_change(
            ctx,
            self.name,
            path,
            rel,
            decoded.text,
            outcome.new_text,
            decoded.fmt,
            note=outcome.message,
            show_diff=outcome.how != "exact",
        )
