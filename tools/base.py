"""The tool protocol: a tool runs with arguments in a context and returns a result.

Contract shared by ``tools/*`` (which implement tools) and ``app/agent`` (which calls them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tools.cancel import Cancellable
from tools.permissions_types import ApprovalDecision, ApprovalRequest, Approver, deny_all


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    output: str  # what the model sees
    diff: str | None = None  # unified diff of an edit
    exit_code: int | None = None  # shell
    command: str | None = None  # shell
    paths: tuple[str, ...] = ()  # workspace-relative files read or written


@runtime_checkable
class Tool(Protocol):
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments object
    kind: str  # 'read' | 'edit' | 'shell' | 'git'

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


class PolicyLike(Protocol):
    def check(self, request: ApprovalRequest) -> ApprovalDecision: ...


class JournalLike(Protocol):
    """Called by a tool before it writes ``path`` (absolute) so the turn can be undone. A
    journal may also have ``wrote(path, data)``, called after the write with its bytes."""

    def record(self, path: Path) -> None: ...


@dataclass
class ToolContext:
    root: Path  # workspace root (resolved)
    policy: PolicyLike | None = None  # None = everything allowed (tests / full-auto)
    journal: JournalLike | None = None
    cancel: Cancellable | None = None
    approver: Approver = deny_all
    extra: dict[str, Any] = field(default_factory=dict)

    def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        if self.policy is None:
            return ApprovalDecision(True)
        return self.policy.check(request)


def schema(tool: Tool) -> dict[str, Any]:
    """OpenAI / Qwen function-tool schema of a tool."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }
