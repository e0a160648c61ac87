"""run_shell: a shell command in the workspace, approved per the permission mode and
confined per ``tools.sandbox`` (bubblewrap when present)."""

from __future__ import annotations

import re
from typing import Any

from tools.base import ToolContext, ToolResult
from tools.permissions_types import ApprovalRequest
from tools.process import ProcessResult, run_process
from tools.sandbox import ShellOptions
from tools.sandbox_host import prepare
from tools.toolkit import BaseTool, ToolError, arg_int, arg_str, ask

DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 1800
OUTPUT_CAP = 30_000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


def format_result(command: str, result: ProcessResult, timeout: float, where: str = "") -> str:
    """What the model sees of a finished command (pure); ``where`` says how it was confined,
    told after a failure so the model does not retry what the sandbox forbids."""
    body = _ANSI.sub("", result.output).rstrip("\n")
    lines = [f"$ {command}"]
    if body:
        lines.append(body)
    if result.timed_out:
        lines.append(f"[timed out after {timeout:g}s; the command and its child processes were killed]")
    elif result.cancelled:
        lines.append("[cancelled by the user; the command and its child processes were killed]")
    else:
        lines.append(f"[exit code {result.exit_code}]")
    if result.stray_killed:
        lines.append("[background processes left running were stopped]")
    if where and (result.exit_code != 0 or result.timed_out):
        lines.append(where)
    return "\n".join(lines)


def shell_options(ctx: ToolContext) -> ShellOptions:
    """The session's shell settings (the agent puts them in ``ctx.extra['shell']``); without
    them, the mode of the policy (no policy: everything allowed, as full-auto)."""
    given = ctx.extra.get("shell")
    if isinstance(given, ShellOptions):
        return given
    return ShellOptions(mode=getattr(ctx.policy, "mode", "full-auto"))


class RunShell(BaseTool):
    name = "run_shell"
    description = (
        "Run a shell command (bash) in the workspace root and return its output and exit code. "
        "Non-interactive; default timeout 120 s."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "the command line"},
            "timeout": {"type": "integer", "description": "seconds before it is killed (default 120)"},
        },
        "required": ["command"],
    }
    kind = "shell"

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = arg_str(args, "command", required=True).strip()
        if not command:
            raise ToolError("command is empty")
        timeout = arg_int(args, "timeout", DEFAULT_TIMEOUT_S) or DEFAULT_TIMEOUT_S
        timeout = max(1, min(timeout, MAX_TIMEOUT_S))
        first = command.splitlines()[0]
        summary = f"run: {first}" + (" ..." if first != command else "")
        rejection = ask(ctx, ApprovalRequest(kind="shell", tool=self.name, summary=summary, command=command))
        if rejection is not None:
            return rejection
        if ctx.cancel is not None and ctx.cancel.cancelled:
            return ToolResult(ok=False, output="cancelled by the user before it started", command=command)
        launch = prepare(command, ctx.root, shell_options(ctx))
        result = run_process(command, ctx.root, timeout=timeout, cancel=ctx.cancel, limit=OUTPUT_CAP,
                             argv=launch.argv, env=launch.env)
        ok = result.exit_code == 0 and not (result.timed_out or result.cancelled)
        return ToolResult(
            ok=ok,
            output=format_result(command, result, timeout, launch.confinement.describe()),
            exit_code=result.exit_code,
            command=command,
        )
