"""The session layer on its own, without a front end: a turn in a thread whose failure is logged."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import make_config

from app.controller.model_session import ModelSession, SessionSetup
from engine.scripted import ScriptedEngine
from tools.permissions_types import ApprovalDecision


class Exploding:
    """An agent whose turn raises: the session must report it, not die."""

    mode = "ask"
    session_id = "x"
    context_tokens = 0
    context_limit = 0
    messages: list[dict] = []

    def run_turn(self, text, cancel=None):
        raise ValueError("boom in the agent")


def test_a_turn_that_raises_is_one_line_and_a_logged_traceback(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "session.log"
    setup = SessionSetup(engine=ScriptedEngine([]), agent_factory=lambda *a: Exploding(), persist=False)
    session = ModelSession(make_config(), repo, setup, on_event=lambda ev: None, approver=lambda r: ApprovalDecision(True),
                           log_path=log)
    assert session.open(lambda p: None) is None
    turn = session.start_turn("hi")
    assert turn.wait(10)
    assert turn.outcome is not None and turn.outcome.final.status == "failed"
    assert turn.outcome.error.startswith("the turn failed: boom in the agent") and str(log) in turn.outcome.error
    assert "Traceback" in log.read_text() and "ValueError" in log.read_text()
    assert not session.busy
