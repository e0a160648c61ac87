"""SVG snapshots of the main screen during generation, the approval dialog and the stats panel,
in each built-in theme. Stats are frozen (FrozenEngine / fixed GenStats), the repo is always
named 'demo' and nothing shows a clock, so the screenshots are deterministic.

Update with: python -m pytest tests/tui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tui_helpers import FrozenEngine, make_config, tool_call

from app.controller.statsfmt import SessionStats
from app.tui.app import TauApp, create_app
from app.tui.screens import ApprovalScreen, StatsScreen
from engine.types import GenStats

THEMES = ["tau-dark", "tau-light", "tau-high-contrast"]
SIZE = (110, 34)

REPLY = (
    "The greeting lives in `a.py`. Here is the plan:\n\n"
    "1. change the string\n2. keep the signature\n\n"
    "```python\ndef greet():\n    return 'hi'\n```\n\n"
    "Applying the edit now, then I will run the tests and report back"
)


async def wait_for(pilot, cond, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError("condition not reached")
        await pilot.pause(0.02)


def app_for(repo: Path, theme: str, engine: FrozenEngine, mode: str = "ask") -> TauApp:
    return create_app(make_config(theme=theme, mode=mode), root=repo, engine=engine, persist=False)


async def settle(pilot) -> None:
    app: TauApp = pilot.app
    app.status.set_live(context_tokens=2150, context_limit=16384)
    await app.flush_now()
    await pilot.pause()
    await app.flush_now()
    await pilot.pause()


@pytest.mark.parametrize("theme", THEMES)
def test_main_screen_during_generation(snap_compare, repo: Path, theme: str) -> None:
    edit = "I'll update the greeting.\n" + tool_call("edit_file", path="a.py", search="'hello'", replace="'hi'")
    paused_at = len(REPLY) // 4 - 6  # chunks of 4 characters
    engine = FrozenEngine([edit, "Done.", REPLY], pause_after=paused_at)
    app = app_for(repo, theme, engine, mode="auto-edit")

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: app.agent is not None)
        app.query_one("#prompt").load_text("make greet say hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.last_final is not None)
        app.query_one("#prompt").load_text("now explain the change")
        await pilot.press("enter")
        await wait_for(pilot, engine.paused.is_set)
        await wait_for(pilot, lambda: app.transcript.current is not None and app.transcript.current.raw == REPLY[: paused_at * 4])
        await settle(pilot)
        assert app.status.live.state == "generating"

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("theme", THEMES)
def test_approval_dialog(snap_compare, repo: Path, theme: str) -> None:
    engine = FrozenEngine(["Updating.\n" + tool_call("edit_file", path="a.py", search="'hello'", replace="'hi there'")])
    app = app_for(repo, theme, engine)

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: app.agent is not None)
        app.query_one("#prompt").load_text("make greet say hi there")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def session_history() -> SessionStats:
    s = SessionStats()
    turns = [
        ("make greet say hi", 96, 1.5, 1.8, 32, 46, 18),
        ("now add a test", 240, 3.1, 3.6, 70, 120, 50),
        ("run the tests", 60, 1.2, 1.6, 30, 20, 10),
        ("fix the failing assert", 180, 2.0, 2.3, 45, 110, 25),
        ("explain the change", 320, 5.5, 6.0, 140, 130, 50),
    ]
    for prompt, tokens, decode, wall, passes, ng, dr in turns:
        s.start_turn(prompt)
        s.add(
            GenStats(
                prompt_tokens=1800,
                completion_tokens=tokens,
                decode_s=decode,
                wall_s=wall,
                verify_passes=passes,
                drafted={"ngram": ng + 30, "draft": dr + 20},
                accepted={"ngram": ng, "draft": dr},
                accept_by_pos=(0.9, 0.7, 0.5),
                ceiling_tok_s=160.0,
            )
        )
    return s


@pytest.mark.parametrize("theme", THEMES)
def test_stats_panel(snap_compare, repo: Path, theme: str) -> None:
    app = app_for(repo, theme, FrozenEngine([]))

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: app.agent is not None)
        app.session.stats = session_history()
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, StatsScreen))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
