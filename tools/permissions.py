"""Permission modes: which actions run by themselves and which ask the user first.

============  ==========  ===========  ==============================
mode          edits       shell / git  reading secret files
============  ==========  ===========  ==============================
ask           ask         ask          ask
auto-edit     apply       ask          ask
full-auto     apply       run          ask (headless: denied)
============  ==========  ===========  ==============================

Kinds: ``edit``, ``shell``, ``commit`` (git_commit, asked like shell), ``read-secret``.
An "always" answer approves that one kind of action for the rest of the session.
"""

from __future__ import annotations

import threading

from tools.permissions_types import MODES, ApprovalDecision, ApprovalRequest, Approver, deny_all

# kinds each mode allows without asking
AUTO_ALLOWED: dict[str, frozenset[str]] = {
    "ask": frozenset(),
    "auto-edit": frozenset({"edit"}),
    "full-auto": frozenset({"edit", "shell", "commit"}),
}


def needs_approval(mode: str, kind: str) -> bool:
    """Pure rule: does ``mode`` ask before an action of ``kind``? Unknown kinds always ask."""
    return kind not in AUTO_ALLOWED.get(mode, frozenset())


class Policy:
    """The session's permission state: a mode, the front end's approver, and the kinds the
    user approved "always". Thread-safe; ``mode`` may be changed at any time."""

    def __init__(self, mode: str = "ask", approver: Approver | None = None) -> None:
        self._lock = threading.Lock()
        self._mode = _checked(mode)
        self.approver: Approver = approver or deny_all
        self._always: set[str] = set()

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        self._mode = _checked(value)

    @property
    def always_allowed(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._always)

    def forget_always(self) -> None:
        with self._lock:
            self._always.clear()

    def check(self, request: ApprovalRequest) -> ApprovalDecision:
        if not needs_approval(self._mode, request.kind):
            return ApprovalDecision(True)
        with self._lock:
            if request.kind in self._always:
                return ApprovalDecision(True, always=True)
        decision = self.approver(request)
        if decision.approved and decision.always:
            with self._lock:
                self._always.add(request.kind)
        return decision


def _checked(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown permission mode {mode!r}; expected one of {', '.join(MODES)}")
    return mode
