"""Plumbing shared by the tool implementations: argument coercion, path confinement and
the uniform error / rejection results the model sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.base import ToolContext, ToolResult
from tools.gitguard import refuse_reason
from tools.paths import PathEscape, relative, resolve_in_workspace
from tools.permissions_types import ApprovalDecision, ApprovalRequest


class ToolError(Exception):
    """A failure to report to the model as ``ToolResult(ok=False, output=str(e))``."""


class BaseTool:
    """Implements ``Tool.run`` around ``_run``: errors become failed results, never raise."""

    name: str = ""
    description: str = ""
    parameters: dict[str, Any] = {}
    kind: str = "read"

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            return self._run(args or {}, ctx)
        except (ToolError, PathEscape) as e:
            return ToolResult(ok=False, output=str(e))
        except OSError as e:
            return ToolResult(ok=False, output=f"{self.name} failed: {one_line(e.strerror or str(e))}")
        except (RuntimeError, ValueError) as e:  # a symlink loop, bad Unicode, a NUL byte: never a crash
            return ToolResult(ok=False, output=f"{self.name} failed: {one_line(str(e)) or type(e).__name__}")

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError


def one_line(text: str, limit: int = 300) -> str:
    """An error message on one line, capped (pure)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _checked_text(key: str, value: str) -> str:
    for i, c in enumerate(value):
        if "\ud800" <= c <= "\udfff":
            raise ToolError(f"argument {key!r} contains a lone surrogate (U+{ord(c):04X}) at offset {i}; send valid Unicode")
    return value


def arg_str(args: dict[str, Any], key: str, default: str | None = None, *, required: bool = False) -> str:
    value = args.get(key)
    if value is None:
        if required:
            raise ToolError(f"missing required argument {key!r}")
        return default if default is not None else ""
    if isinstance(value, str):
        return _checked_text(key, value)
    if isinstance(value, int | float | bool):
        return str(value)
    raise ToolError(f"argument {key!r} must be a string")


def arg_int(args: dict[str, Any], key: str, default: int | None = None) -> int | None:
    value = args.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        raise ToolError(f"argument {key!r} must be an integer")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ToolError(f"argument {key!r} must be an integer, got {value!r}") from None


def arg_bool(args: dict[str, Any], key: str, default: bool = False) -> bool:
    value = args.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ToolError(f"argument {key!r} must be true or false, got {value!r}")


def workspace_path(ctx: ToolContext, raw: str) -> tuple[Path, str]:
    """(absolute path, workspace-relative path) of a path argument, confined to the workspace."""
    p = resolve_in_workspace(ctx.root, raw)
    return p, relative(ctx.root, p)


def refuse_git_internals(root: Path, rel: str) -> None:
    """Refuse a write to anything git reads as its own (tools.gitguard)."""
    reason = refuse_reason(root, rel)
    if reason is not None:
        raise ToolError(f"refusing to write {rel}: {reason}")


def rejected(decision: ApprovalDecision) -> ToolResult:
    return ToolResult(ok=False, output=f"rejected by user: {decision.note or 'no reason given'}")


def ask(ctx: ToolContext, request: ApprovalRequest) -> ToolResult | None:
    """None when approved, else the rejection result to return."""
    decision = ctx.ask(request)
    return None if decision.approved else rejected(decision)


def record_write(ctx: ToolContext, path: Path) -> None:
    if ctx.journal is not None:
        ctx.journal.record(path)


def record_written(ctx: ToolContext, path: Path, data: bytes) -> None:
    """Tell the journal what was written, so undo can tell the agent's bytes from the user's."""
    wrote = getattr(ctx.journal, "wrote", None)
    if callable(wrote):
        wrote(path, data)
