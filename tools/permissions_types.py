"""The approval handshake between the agent loop and a front end.

The agent asks an ``Approver`` (a callable each front end supplies) before an action that
the permission mode does not allow by itself. The approver may block (the agent runs in a
worker thread) until the user answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

MODES = ("ask", "auto-edit", "full-auto")


@dataclass(frozen=True)
class ApprovalRequest:
    kind: str  # 'edit' | 'shell' | 'read-secret'
    tool: str
    summary: str  # one line: "edit src/app.py", "run: pytest -q"
    diff: str | None = None  # unified diff for edits
    command: str | None = None  # for shell
    path: str | None = None


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
