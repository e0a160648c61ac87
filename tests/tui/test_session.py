"""Whole sessions driven with Pilot on the real agent loop and the scripted engine."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from app.tui.app import TauApp, create_app
from app.tui.screens import ApprovalScreen
from app.tui.widgets import AssistantView, NoticeLine, ToolCard, UserMessage
from engine.scripted import ScriptedEngine

from .helpers import make_config, tool_call

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
        assert app.session_stats.totals().generations == 2
        assert "tok/s" in str(app.status.render())
