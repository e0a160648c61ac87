"""Plumbing shared by the tool implementations: argument coercion, path confinement and
the uniform error / rejection results the model sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.base import ToolContext, ToolResult
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
            return ToolResult(ok=False, output=f"{self.name} failed: {e.strerror or e}")

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError


def arg_str(args: dict[str, Any], key: str, default: str | None = None, *, required: bool = False) -> str:
    value = args.get(key)
    if value is None:
        if required:
            raise ToolError(f"missing required argument {key!r}")
        return default if default is not None else ""
    if isinstance(value, str):
        return value
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


def workspace_path(ctx: ToolContext, raw: str) -> tuple[Path, str]:
    """(absolute path, workspace-relative path) of a path argument, confined to the workspace."""
    p = resolve_in_workspace(ctx.root, raw)
    return p, relative(ctx.root, p)


def refuse_git_internals(rel: str) -> None:
    if rel == ".git" or rel.startswith(".git/"):
        raise ToolError(f"refusing to write {rel}: files inside .git are managed by git")


def rejected(decision: ApprovalDecision) -> ToolResult:
    return ToolResult(ok=False, output=f"rejected by user: {decision.note or 'no reason given'}")


def ask(ctx: ToolContext, request: ApprovalRequest) -> ToolResult | None:
    """None when approved, else the rejection result to return."""
    decision = ctx.ask(request)
    return None if decision.approved else rejected(decision)


def record_write(ctx: ToolContext, path: Path) -> None:
    if ctx.journal is not None:
        ctx.journal.record(path)
