"""/undo after the user edited a file the agent wrote: the TUI and ``tau --plain`` get the same typed
result from the session layer, both say the file was kept and why, and the file holds the user's text."""

from __future__ import annotations

import asyncio
import io
import shutil
from pathlib import Path

import pytest
from prompt_toolkit import PromptSession
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from tui_helpers import FrozenEngine, make_config, send, tool_call, until

from app.controller import results
from app.controller.model_session import ModelSession, SessionSetup
from app.controller.results import CommandResult, Undone
from app.plain import PlainUI
from app.tui.app import create_app
from app.tui.widgets import NoticeLine
from tools.undo import Kept

TURN = "make greet say hi and add notes"
USERS = "def greet():\n    return 'hi'\n\n\ndef mine():\n    return 42\n"  # saved after the agent's edit


def replies() -> list[str]:
    return [
        tool_call("edit_file", path="a.py", search="'hello'", replace="'hi'"),
        tool_call("write_file", path="notes.md", content="- agent note\n"),
        "Done.",
    ]


@pytest.fixture
def undos(monkeypatch: pytest.MonkeyPatch) -> list[CommandResult]:
    """The results of /undo, whichever front end asked the session layer."""
    seen: list[CommandResult] = []
    real = ModelSession.command

    def record(self: ModelSession, name: str, arg: str = "") -> CommandResult:
        result = real(self, name, arg)
        if name == "undo":
            seen.append(result)
        return result

    monkeypatch.setattr(ModelSession, "command", record)
    return seen


def run_tui(repo: Path, undos: list[CommandResult]) -> list[str]:
    """Notices the TUI shows after a turn, the user's save and /undo."""

    async def drive() -> list[str]:
        app = create_app(make_config(mode="auto-edit"), root=repo, engine=FrozenEngine(replies()), persist=False)
        async with app.run_test(size=(110, 40)) as pilot:
            await until(pilot, lambda: app.agent is not None)
            await send(pilot, TURN)
            await until(pilot, lambda: app.last_final is not None)
            (repo / "a.py").write_text(USERS)
            await send(pilot, "/undo")
            await until(pilot, lambda: bool(undos) and any("undo:" in n for n in notices(app)))
            return notices(app)

    return asyncio.run(drive())


def notices(app) -> list[str]:
    return [str(n.render()) for n in app.query(NoticeLine)]


def run_plain(repo: Path) -> str:
    """What ``tau --plain`` prints for the same turn, save and /undo."""
    out = io.StringIO()
    with create_pipe_input() as pipe:
        session: PromptSession = PromptSession(input=pipe, output=DummyOutput(), history=InMemoryHistory())
        setup = SessionSetup(engine=FrozenEngine(replies()), persist=False)
        ui = PlainUI(make_config(mode="auto-edit"), repo, setup, out=out, session=session, color=False)
        assert ui.start()
        assert ui.run_turn(TURN).status == "done"
        (repo / "a.py").write_text(USERS)
        assert ui.command("undo", "")
    return out.getvalue()


def test_undo_after_the_users_edit_keeps_the_file_and_both_front_ends_say_so(
    repo: Path, tmp_path: Path, undos: list[CommandResult]
) -> None:
    tui_repo, plain_repo = tmp_path / "tui" / "demo", tmp_path / "pln" / "demo"
    shutil.copytree(repo, tui_repo)
    shutil.copytree(repo, plain_repo)

    shown = run_tui(tui_repo, undos)
    printed = run_plain(plain_repo)

    assert len(undos) == 2 and undos[0] == undos[1]  # one typed result, whichever front end
    undone = undos[0]
    assert isinstance(undone, Undone)
    assert undone.files == ("notes.md",)  # the untouched file the agent created is gone
    assert [(k.path, k.why) for k in undone.kept] == [("a.py", "changed")]
    assert isinstance(undone.kept[0], Kept) and "+def mine():" in undone.kept[0].hint
    for root in (tui_repo, plain_repo):
        assert (root / "a.py").read_text() == USERS
        assert not (root / "notes.md").exists()

    said = results.text(undone)
    assert "undo: kept a.py (changed since tau wrote it: left as it is)" in said
    assert "undo: restored notes.md" in said and "+def mine():" in said
    assert said in shown  # the TUI's notice
    assert said in printed  # the --plain output
