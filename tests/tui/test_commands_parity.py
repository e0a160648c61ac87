"""Every slash command, typed into the TUI and into ``tau --plain``, runs the session layer's code and
gives the same typed result; the copies that used to disagree are pinned here."""

from __future__ import annotations

import asyncio
import io
import re
import shutil
from pathlib import Path

import pytest
from prompt_toolkit import PromptSession
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from tui_helpers import FrozenEngine, make_config, send, tool_call, until

from app.controller import commands
from app.controller.model_session import ModelSession, SessionSetup
from app.controller.results import (
    CommandResult,
    ModeSet,
    Problem,
    QuitRequested,
    SessionsListed,
    Undone,
    session_line,
)
from app.plain import PlainUI
from app.tui.app import create_app

TURN = "make greet say hi"
SCRIPT = [
    "/help", "/model", "/mode", "/mode full-auto", "/mode bogus", "/stats", "/sessions", "/theme",
    "/theme tau-light", "/theme nope", "/diff", "/undo", "/undo", "/compact", "/clear", "/nope", "/quit",
]


def replies() -> list[str]:
    edit = tool_call("edit_file", path="a.py", search="'hello'", replace="'hi'")
    return [edit, "Done.", "Summary: greet now says hi."]


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, CommandResult]]:
    """The results of every ModelSession.command call, whichever front end made it."""
    seen: list[tuple[str, CommandResult]] = []
    real = ModelSession.command

    def record(self: ModelSession, name: str, arg: str = "") -> CommandResult:
        result = real(self, name, arg)
        seen.append((f"/{name} {arg}".strip(), result))
        return result

    monkeypatch.setattr(ModelSession, "command", record)
    return seen


def comparable(result: CommandResult) -> object:
    """Saved sessions differ in id, time and path between two runs; their content must not."""
    if isinstance(result, SessionsListed):
        return [(s.title, s.messages, s.mode, s.model) for s in result.sessions]
    return result


def run_tui(repo: Path, recorded: list) -> None:
    async def drive() -> None:
        app = create_app(make_config(mode="auto-edit"), root=repo, engine=FrozenEngine(replies()), persist=False)
        async with app.run_test(size=(110, 40)) as pilot:
            await until(pilot, lambda: app.agent is not None)
            await send(pilot, TURN)
            await until(pilot, lambda: app.last_final is not None)
            for i, line in enumerate(SCRIPT):
                await send(pilot, line)
                await until(pilot, lambda i=i: len(recorded) > i)
                if line == "/quit":
                    break
                while len(pilot.app.screen_stack) > 1:
                    await pilot.press("escape")
                    await pilot.pause()
        assert app.return_code == 0  # /quit left the app

    asyncio.run(drive())


def run_plain(repo: Path) -> str:
    out = io.StringIO()
    with create_pipe_input() as pipe:
        session: PromptSession = PromptSession(input=pipe, output=DummyOutput(), history=InMemoryHistory())
        setup = SessionSetup(engine=FrozenEngine(replies()), persist=False)
        ui = PlainUI(make_config(mode="auto-edit"), repo, setup, out=out, session=session, color=False)
        pipe.send_text(TURN + "\r" + "".join(line + "\r" for line in SCRIPT))
        assert ui.loop() == 0  # /quit
    return out.getvalue()


def fresh_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    d = tmp_path / f"state-{name}"
    d.mkdir()
    monkeypatch.setenv("TAU_STATE_DIR", str(d))


def test_each_slash_command_gives_the_same_result_in_the_tui_and_plain(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recorded: list
) -> None:
    assert {line.split()[0][1:] for line in SCRIPT} >= set(commands.NAMES)  # every command runs
    tui_repo, plain_repo = tmp_path / "tui" / "demo", tmp_path / "pln" / "demo"  # paths of one length: one prompt
    shutil.copytree(repo, tui_repo)
    shutil.copytree(repo, plain_repo)

    fresh_state(tmp_path, monkeypatch, "tui")
    run_tui(tui_repo, recorded)
    tui = list(recorded)
    recorded.clear()
    fresh_state(tmp_path, monkeypatch, "plain")
    text = run_plain(plain_repo)
    plain = list(recorded)

    assert [line for line, _ in tui] == SCRIPT
    assert [line for line, _ in plain] == SCRIPT
    for (line, a), (_, b) in zip(tui, plain, strict=True):
        assert comparable(a) == comparable(b), line
    results = [r for _, r in plain]
    at = {line: results[i] for i, line in enumerate(SCRIPT)}
    # /mode with no argument cycles in both (it only printed the mode in --plain)
    assert at["/mode"] == ModeSet("full-auto") and at["/mode full-auto"] == ModeSet("full-auto")
    assert isinstance(at["/mode bogus"], Problem) and isinstance(at["/nope"], Problem)
    first_undo = SCRIPT.index("/undo")
    assert results[first_undo] == Undone(("a.py",)) and results[first_undo + 1] == Undone(())
    assert "'hi'" in str(at["/diff"]) and isinstance(at["/quit"], QuitRequested)
    listed = at["/sessions"]
    assert isinstance(listed, SessionsListed) and len(listed.sessions) == 1
    # /sessions shows a readable time in both (the TUI printed the raw float)
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", session_line(listed.sessions[0]))
    assert session_line(listed.sessions[0]) in text
    assert str(listed.sessions[0].updated) not in text


def test_plain_hides_fenced_and_bare_json_tool_calls_like_the_tui(repo: Path) -> None:
    fenced = 'Reading it.\n```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```'
    bare = '{"name": "read_file", "arguments": {"path": "README.md"}}'
    out = io.StringIO()
    with create_pipe_input() as pipe:
        session: PromptSession = PromptSession(input=pipe, output=DummyOutput(), history=InMemoryHistory())
        setup = SessionSetup(engine=FrozenEngine([fenced, bare, "It returns hello."]), persist=False)
        ui = PlainUI(make_config(), repo, setup, out=out, session=session, color=False)
        pipe.send_text("what does greet return?\r")
        pipe.send_text("\x04")
        assert ui.loop() == 0
    text = out.getvalue()
    assert "Reading it." in text and "It returns hello." in text
    assert "⚙ read_file a.py" in text and "⚙ read_file README.md" in text  # both were calls
    assert '"name"' not in text and "```" not in text
