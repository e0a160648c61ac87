"""Whole sessions driven with Pilot on the real agent loop and the scripted engine."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from tui_helpers import FrozenEngine, make_config, tool_call

from app.tui.app import TauApp, create_app
from app.tui.cards import ToolCard
from app.tui.screens import ApprovalScreen
from app.tui.widgets import AssistantView, NoticeLine, UserMessage
from engine.scripted import ScriptedEngine

pytestmark = pytest.mark.asyncio

SIZE = (110, 40)


def build(repo: Path, engine: ScriptedEngine, **cfg: object) -> TauApp:
    return create_app(make_config(**cfg), root=repo, engine=engine, persist=False)


async def until(pilot, cond: Callable[[], bool], timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)


async def send(pilot, text: str) -> None:
    app = pilot.app
    area = app.query_one("#prompt")
    area.load_text(text)
    await pilot.press("enter")


def notices(app: TauApp) -> list[str]:
    return [str(n.render()) for n in app.query(NoticeLine)]


async def test_request_and_approved_edit_with_diff_card(repo: Path) -> None:
    engine = ScriptedEngine(
        [
            "I'll change the greeting.\n" + tool_call("edit_file", path="a.py", search="'hello'", replace="'hi'"),
            "Done: `greet()` now returns **'hi'**.\n\n```python\ndef greet():\n    return 'hi'\n```",
        ]
    )
    app = build(repo, engine)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent is not None)
        await send(pilot, "make greet say hi")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        dialog = app.screen
        assert isinstance(dialog, ApprovalScreen)
        assert dialog.request.kind == "edit" and "'hi'" in (dialog.request.diff or "")
        await pilot.press("y")
        await until(pilot, lambda: not app.generating)
        await app.flush_now()
        assert (repo / "a.py").read_text() == "def greet():\n    return 'hi'\n"
        assert [m.text for m in app.query(UserMessage)] == ["make greet say hi"]
        cards = list(app.query(ToolCard))
        assert len(cards) == 1 and cards[0].result_ok and not cards[0].collapsed
        assert cards[0].tool_name == "edit_file"
        assert "+    return 'hi'" in (cards[0].diff or "") and "-    return 'hello'" in (cards[0].diff or "")
        views = list(app.query(AssistantView))
        assert views[-1].shown.startswith("Done: `greet()` now returns")
        assert app.last_final is not None and app.last_final.status == "done"
        # stats of both generations were recorded for /stats
        assert app.session.stats.totals().generations == 2
        assert "tok/s" in str(app.status.render())


async def test_undo_restores_the_file_and_diff_shows_changes(repo: Path) -> None:
    engine = ScriptedEngine(
        [tool_call("edit_file", path="a.py", search="'hello'", replace="'bye'"), "Changed it."]
    )
    app = build(repo, engine, mode="auto-edit")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent is not None)
        await send(pilot, "say bye")
        await until(pilot, lambda: app.last_final is not None)
        assert "'bye'" in (repo / "a.py").read_text()
        await send(pilot, "/diff")
        from app.tui.cards import DiffCard

        await until(pilot, lambda: bool(app.query(DiffCard)))
        assert "'bye'" in app.query_one(DiffCard)._diff
        await send(pilot, "/undo")
        await until(pilot, lambda: any("undo:" in n for n in notices(app)))
        assert (repo / "a.py").read_text() == "def greet():\n    return 'hello'\n"
        assert any("restored" in n and "a.py" in n for n in notices(app))
        await send(pilot, "/undo")
        await until(pilot, lambda: any("nothing to undo" in n for n in notices(app)))


async def test_rejected_command_tells_the_model_the_note(repo: Path) -> None:
    engine = ScriptedEngine([tool_call("run_shell", command="rm -rf /tmp/x"), "Understood, I will not delete it."])
    app = build(repo, engine)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent is not None)
        await send(pilot, "clean up")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        dialog = app.screen
        assert isinstance(dialog, ApprovalScreen)
        assert dialog.request.kind == "shell" and dialog.request.command == "rm -rf /tmp/x"
        dialog.query_one("#note").focus()
        await pilot.press(*"keep tmp")
        await pilot.press("enter")  # enter in the note rejects with it
        await until(pilot, lambda: app.last_final is not None)
        card = app.query_one(ToolCard)
        assert card.result_ok is False and card.tool_name == "run_shell"
        assert "keep tmp" in engine.prompts[-1]  # the model was told why
        await app.flush_now()
        assert app.query(AssistantView).last().shown == "Understood, I will not delete it."


async def test_approved_command_shows_command_exit_code_and_output(repo: Path) -> None:
    engine = ScriptedEngine([tool_call("run_shell", command="echo hi-there; exit 3"), "It exited with 3."])
    app = build(repo, engine)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent is not None)
        await send(pilot, "run it")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("a")  # always, for this session
        await until(pilot, lambda: app.last_final is not None)
        card = app.query_one(ToolCard)
        assert card.exit_code == 3 and "hi-there" in card.output and not card.collapsed
        assert "exit 3" in str(card.title)


async def test_ctrl_c_cancels_generation_then_twice_quits(repo: Path) -> None:
    engine = ScriptedEngine(["word " * 400, "second answer"], delay=0.01)
    app = build(repo, engine)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent is not None)
        await send(pilot, "write a lot")
        await until(pilot, lambda: app.transcript.current is not None and len(app.transcript.current.raw) > 20)
        assert app.status.live.state == "generating"
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.generating)
        assert app.last_final is not None and app.last_final.status == "cancelled"
        assert any(n == "cancelled" for n in notices(app))
        assert app.status.live.state == "idle"
        streamed = app.query(AssistantView).first().raw
        assert 20 < len(streamed) < len("word " * 400)
        # the session goes on after a cancellation
        await send(pilot, "again")
        await until(pilot, lambda: app.last_final is not None and app.last_final.status == "done")
        await app.flush_now()
        assert app.query(AssistantView).last().shown == "second answer"
        await pilot.press("ctrl+c")
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0


async def test_slash_commands_mode_theme_help_and_completion(repo: Path) -> None:
    from app.config import load_config
    from app.tui.prompt import PromptArea, Suggestions
    from app.tui.screens import TextScreen

    app = create_app(make_config(), root=repo, engine=ScriptedEngine([]))  # persists settings
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent is not None)
        area = app.query_one(PromptArea)
        await pilot.press("/", "t", "h")
        assert app.query_one(Suggestions).has_class("-shown")
        await pilot.press("tab")
        assert area.text == "/theme "
        await pilot.press(*"tau-light", "enter")
        await pilot.pause()
        assert app.theme == "tau-light"
        assert load_config().theme == "tau-light"  # remembered
        await send(pilot, "/mode full-auto")
        assert app.agent is not None and app.agent.mode == "full-auto"
        assert app.status.live.mode == "full-auto"
        await send(pilot, "/mode")  # cycles
        assert app.agent.mode == "ask"
        await send(pilot, "/nope")
        assert any("unknown command /nope" in n for n in notices(app))
        await send(pilot, "/help")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TextScreen))
        # history: up recalls the previous inputs
        await pilot.press("up")
        assert area.text == "/help"
        await pilot.press("up")
        assert area.text == "/nope"
        await pilot.press("down", "down")
        assert area.text == ""
        # ctrl+j inserts a newline, enter sends the multi-line text
        await pilot.press("a", "ctrl+j", "b")
        assert area.text == "a\nb"


async def test_engine_failure_is_a_readable_message_with_a_logged_traceback(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.controller import opening

    def broken(cfg, notify):
        notify("reading weights")
        raise FileNotFoundError("model file missing.gguf")

    monkeypatch.setattr(opening, "override", broken)
    log = tmp_path / "tui.log"
    app = create_app(make_config(), root=repo, log_path=log, persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.status.live.state == "error")
        msgs = notices(app)
        assert any("could not start the model: model file missing.gguf" in n for n in msgs)
        assert "Traceback" in log.read_text() and "FileNotFoundError" in log.read_text()
        await send(pilot, "hello")
        assert any("not loaded" in n for n in notices(app))


async def test_stats_panel_and_stream_with_frozen_stats(repo: Path) -> None:
    from app.tui.screens import StatsScreen

    engine = FrozenEngine(["Hello **there**."])
    app = build(repo, engine)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent is not None)
        await send(pilot, "hi")
        await until(pilot, lambda: app.last_final is not None)
        bar = str(app.status.render())
        assert "decode 64.0 tok/s" in bar and "τ 3.00" in bar and "ngram 72% draft 28%" in bar
        assert "ceiling 40%" in bar and "qwen2.5-coder-1.5b + qwen2.5-coder-0.5b" in bar
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, StatsScreen))
        assert app.session.stats.totals().stats.completion_tokens == 96
        await pilot.press("escape")


async def test_resume_sessions_clear_model_and_compact(repo: Path) -> None:
    from app.tui.screens import TextScreen

    first = build(repo, ScriptedEngine(["The answer is 42."]))
    async with first.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: first.agent is not None)
        await send(pilot, "what is the answer?")
        await until(pilot, lambda: first.last_final is not None)
        sid = first.agent.session_id if first.agent else ""
    assert sid

    engine = ScriptedEngine(["Summary: the user asked for the answer; it is 42."])
    app = create_app(make_config(), root=repo, engine=engine, resume="latest", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent is not None and bool(app.query(UserMessage)))
        await pilot.pause()
        assert [m.text for m in app.query(UserMessage)] == ["what is the answer?"]
        await app.flush_now()
        assert app.query(AssistantView).last().shown == "The answer is 42."
        assert any(f"resumed session {sid}" in n for n in notices(app))
        await send(pilot, "/sessions")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        assert sid in str(app.screen.body)
        await pilot.press("escape")
        await send(pilot, "/model")
        assert any("model   scripted" in n for n in notices(app))
        await send(pilot, "/compact")
        await until(pilot, lambda: any("compacted" in n for n in notices(app)))
        assert not app.generating and app.status.live.state == "idle"
        await send(pilot, "/clear")
        await until(pilot, lambda: any("conversation cleared" in n for n in notices(app)))
        assert not app.query(UserMessage)
        assert app.agent is not None and [m["role"] for m in app.agent.messages] == ["system"]


async def test_qwen3_thinking_is_folded_above_the_answer(repo: Path) -> None:
    from textual.widgets import Collapsible, Static

    engine = ScriptedEngine(["<think>\nThe user greets me.\nA short answer will do.\n</think>\n\nHello there."], family="qwen3")
    app = build(repo, engine)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent is not None)
        await send(pilot, "hi")
        await until(pilot, lambda: bool(app.query(Collapsible)) and not app.generating)
        fold = app.query_one(Collapsible)
        assert fold.collapsed and fold.title == "thinking (2 lines)"
        assert "The user greets me." in str(fold.query_one(".thought", Static).render())
        views = list(app.query(AssistantView))
        assert len(views) == 1 and "Hello there." in views[0].raw and "<think>" not in views[0].shown
        assert fold.parent is views[0].parent and fold.parent.children.index(fold) < fold.parent.children.index(views[0])


async def test_what_is_typed_is_computed_ahead_and_the_turn_sends_exactly_that(repo: Path, monkeypatch) -> None:
    import app.controller.model_session as ms

    monkeypatch.setattr(ms, "TYPING_PAUSE_S", 0.05)
    engine = ScriptedEngine(["It returns 'hello'."])
    app = build(repo, engine)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent is not None and len(engine.primed) == 1)
        await pilot.click("#prompt")
        await pilot.press(*"what does a.py do")
        await until(pilot, lambda: "user\nwhat does a.py do\n" in engine.primed[-1])  # the pause after the last key
        assert "def greet" in engine.primed[-1]  # the file it names is attached
        await pilot.press("enter")
        await until(pilot, lambda: not app.generating and len(engine.prompts) == 1)
        assert engine.prompts[0] == engine.primed[-1]
