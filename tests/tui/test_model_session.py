"""The session layer on its own, without a front end: a turn in a thread whose failure is logged."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import make_config, wait_until

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


def _session(repo: Path, tmp_path: Path, engine: ScriptedEngine, **cfg) -> ModelSession:
    setup = SessionSetup(engine=engine, persist=False)
    return ModelSession(make_config(**cfg), repo, setup, on_event=lambda ev: None,
                        approver=lambda r: ApprovalDecision(True), log_path=tmp_path / "session.log")


def test_opening_a_session_primes_the_prompt_its_first_turn_starts_with(repo: Path, tmp_path: Path) -> None:
    engine = ScriptedEngine(["Nothing to change."])
    session = _session(repo, tmp_path, engine)
    assert session.open(lambda p: None) is None
    assert session.primed is not None
    session.primed.join(10)
    assert len(engine.primed) == 1 and "Repository map" in engine.primed[0]  # the system prompt and the repo map
    turn = session.start_turn("what does this project do?")
    assert turn.wait(10)
    assert engine.prompts[0].startswith(engine.primed[0])  # the turn's prompt extends what was computed
    assert len(engine.prompts[0]) > len(engine.primed[0])


def test_clearing_the_conversation_primes_again_and_prime_false_primes_nothing(repo: Path, tmp_path: Path) -> None:
    engine = ScriptedEngine(["Nothing to change."])
    session = _session(repo, tmp_path, engine)
    assert session.open(lambda p: None) is None
    assert session.start_turn("hello").wait(10)
    session.command("clear")
    assert session.primed is not None
    session.primed.join(10)
    assert len(engine.primed) == 2 and engine.primed[1] == engine.primed[0]  # back to the system prompt alone

    quiet = ScriptedEngine([])
    off = _session(repo, tmp_path, quiet, prime=False)
    assert off.open(lambda p: None) is None
    assert off.primed is None and quiet.primed == []


def test_closing_a_session_cancels_a_prime_not_yet_run(repo: Path, tmp_path: Path) -> None:
    engine = ScriptedEngine([])
    session = _session(repo, tmp_path, engine)
    session.close()  # before open: the prime that open starts finds its token cancelled
    assert session.open(lambda p: None) is None
    assert session.primed is not None
    session.primed.join(10)
    assert engine.primed == []


def test_a_pause_in_typing_computes_the_prompt_the_turn_then_sends(repo: Path, tmp_path: Path, monkeypatch) -> None:
    import app.controller.model_session as ms

    monkeypatch.setattr(ms, "TYPING_PAUSE_S", 0.05)
    engine = ScriptedEngine(["Nothing to change."])
    session = _session(repo, tmp_path, engine)
    assert session.open(lambda p: None) is None
    assert wait_until(lambda: len(engine.primed) == 1)
    session.typing("explain a.p")  # a later change within the pause replaces it
    session.typing("explain a.py")
    assert wait_until(lambda: len(engine.primed) == 2)
    assert "def greet" in engine.primed[1]  # the file it names is attached, as the turn attaches it
    assert session.start_turn("explain a.py").wait(10)
    assert engine.prompts[0] == engine.primed[1]  # the turn's first prompt is exactly what was computed
    session.typing("/clear")  # commands and empty input are not computed
    session.typing("  ")
    import time

    time.sleep(0.2)
    assert len(engine.primed) == 2


def test_a_turn_sent_with_other_text_cancels_the_prime_of_what_was_typed(repo: Path, tmp_path: Path, monkeypatch) -> None:
    import app.controller.model_session as ms

    monkeypatch.setattr(ms, "TYPING_PAUSE_S", 0.05)
    engine = ScriptedEngine(["ok", "ok"])
    session = _session(repo, tmp_path, engine)
    assert session.open(lambda p: None) is None
    assert wait_until(lambda: session.primed is not None and not session.primed.is_alive())
    session.typing("first draft")
    assert wait_until(lambda: len(engine.primed) == 2)
    token = session._prime_cancel
    assert token is not None and not token.cancelled
    assert session.start_turn("something else").wait(10)
    assert token.cancelled  # a prime still running would compute a message nobody sends
    session.typing("same text")
    assert wait_until(lambda: len(engine.primed) == 3)
    same = session._prime_cancel
    assert session.start_turn("same text").wait(10)
    assert same is not None and not same.cancelled


def test_a_message_typed_during_a_turn_is_computed_when_the_turn_ends(repo: Path, tmp_path: Path, monkeypatch) -> None:
    import threading

    import app.controller.model_session as ms

    monkeypatch.setattr(ms, "TYPING_PAUSE_S", 0.05)
    gate = threading.Event()
    engine = ScriptedEngine([lambda prompt: gate.wait(10) and "ok"])
    session = _session(repo, tmp_path, engine)
    assert session.open(lambda p: None) is None
    assert wait_until(lambda: len(engine.primed) == 1)
    turn = session.start_turn("first")
    session.typing("next question about a.py")
    import time

    time.sleep(0.3)
    assert len(engine.primed) == 1  # not while the turn runs: it holds the engine
    gate.set()
    assert turn.wait(10)
    assert wait_until(lambda: len(engine.primed) == 2)
    assert "user\nnext question about a.py\n" in engine.primed[1] and "user\nfirst" in engine.primed[1]


def test_the_conversation_is_saved_for_later_sessions_and_a_typed_message_is_not(repo: Path, tmp_path: Path, monkeypatch) -> None:
    import app.controller.model_session as ms

    monkeypatch.setattr(ms, "TYPING_PAUSE_S", 0.05)
    engine = ScriptedEngine([])
    session = _session(repo, tmp_path, engine)
    assert session.open(lambda p: None) is None
    assert wait_until(lambda: len(engine.primed) == 1)
    session.typing("explain a.py")
    assert wait_until(lambda: len(engine.primed) == 2)
    assert engine.primes_saved == [True, False]
