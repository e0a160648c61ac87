"""The approval handshake between the agent loop and a front end.

The agent asks an ``Approver`` (a callable each front end supplies) before an action that
the permission mode does not allow by itself. The approver may block (the agent runs in a
worker thread) until the user answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tools.visible import visible_line, visible_opt

# the permission modes, least to most trusting: the one home of their names
MODES = ("ask", "auto-edit", "full-auto")


@dataclass(frozen=True)
class ApprovalRequest:
    """What the user is asked to approve. Every text field is display-safe: control codes are
    made visible (tools.visible) when the request is built, so no front end can be tricked
    into showing something other than what will run."""

    kind: str  # 'edit' | 'shell' | 'commit' | 'read-secret'
    tool: str
    summary: str  # one line: "edit src/app.py", "run: pytest -q"
    diff: str | None = None  # unified diff for edits
    command: str | None = None  # for shell
    path: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "summary", visible_line(self.summary))
        object.__setattr__(self, "tool", visible_line(self.tool))
        object.__setattr__(self, "path", None if self.path is None else visible_line(self.path))
        object.__setattr__(self, "diff", visible_opt(self.diff))
        object.__setattr__(self, "command", visible_opt(self.command))


@dataclass(frozen=True)
class ApprovalDecision:
    approved: bool
    always: bool = False  # approve this kind for the rest of the session
    note: str = ""  # told to the model on rejection


Approver = Callable[[ApprovalRequest], ApprovalDecision]


def deny_all(_req: ApprovalRequest) -> ApprovalDecision:
    return ApprovalDecision(False, note="no approver available (headless run)")


def approve_all(_req: ApprovalRequest) -> ApprovalDecision:
    return ApprovalDecision(True)
