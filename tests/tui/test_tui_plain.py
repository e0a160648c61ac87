"""``tau --plain`` on the real agent loop and the scripted engine, through a pipe input."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from tui_helpers import make_config, tool_call, wait_until

from app.controller.model_session import SessionSetup
from app.plain import PlainUI, TauCompleter, color_diff
from engine.scripted import ScriptedEngine


@pytest.fixture
def pipe() -> Iterator:
    with create_pipe_input() as inp:
        yield inp


def plain(repo: Path, engine: ScriptedEngine, pipe, **cfg: object) -> tuple[PlainUI, io.StringIO]:
    out = io.StringIO()
    session: PromptSession = PromptSession(input=pipe, output=DummyOutput(), history=InMemoryHistory())
    setup = SessionSetup(engine=engine, persist=False)
    ui = PlainUI(make_config(**cfg), repo, setup, out=out, session=session, color=False)
    return ui, out


def test_plain_session_edit_approval_undo_and_rejection(repo: Path, pipe) -> None:
    engine = ScriptedEngine(
        [
            "Sure.\n" + tool_call("edit_file", path="a.py", search="'hello'", replace="'hi'"),
            "Done, it says hi.",
            tool_call("run_shell", command="rm -rf build"),
            "OK, not removing it.",
        ]
    )
    ui, out = plain(repo, engine, pipe)
    pipe.send_text("make greet say hi\r" "y\r" "/undo\r" "clean\r" "n\r" "keep it\r" "/stats\r")
    pipe.send_text("\x04")  # ctrl+d quits
    assert ui.loop() == 0
    text = out.getvalue()
    assert "τ tau  demo  scripted" in text
    assert "+    return 'hi'" in text and "-    return 'hello'" in text  # the diff, shown for approval
    assert "Done, it says hi." in text
    assert "tok/s" in text and "τ " in text  # the stats line after each turn
    assert "restored a.py" in text
    assert (repo / "a.py").read_text() == "def greet():\n    return 'hello'\n"
    assert "$ rm -rf build" in text
    assert "keep it" in engine.prompts[-1]
    assert "OK, not removing it." in text
    assert "turns 2" in text  # /stats
    assert "<tool_call>" not in text


def test_plain_completion_of_commands_arguments_and_paths(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text("")
    comp = TauCompleter(repo, ["tau-dark", "tau-light"])

    def words(text: str) -> list[str]:
        return [c.text for c in comp.get_completions(Document(text), CompleteEvent(completion_requested=True))]

    assert words("/th") == ["/theme"]
    assert words("/theme tau-l") == ["tau-light"]
    assert words("/mode f") == ["full-auto"]
    assert words("look at sr") == ["c"]
    assert words("look at src/ma") == ["in.py"]


def test_plain_diff_colouring() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    coloured = color_diff(diff)
    assert "\x1b[" in coloured and "+b" in coloured
    assert color_diff(diff, color=False) == diff.rstrip("\n")


def test_plain_shows_thinking_dimmed_before_the_answer(repo: Path, pipe) -> None:
    engine = ScriptedEngine(["<think>\nTwo plus two is four.\n</think>\n\nThe answer is 4."])
    ui, out = plain(repo, engine, pipe)
    pipe.send_text("what is 2+2\r")
    pipe.send_text("\x04")
    assert ui.loop() == 0
    text = out.getvalue()
    assert "thinking: Two plus two is four." in text
    assert "The answer is 4." in text.split("thinking: Two plus two is four.", 1)[1]
    assert "<think>" not in text and "</think>" not in text and "</" not in text


def test_plain_thinking_holds_back_a_partial_closing_tag() -> None:
    from app.plain import _settled_thinking

    assert _settled_thinking("<think>so it is 4</thi") == "so it is 4"
    assert _settled_thinking("<think>a < b") == "a < b"
    assert _settled_thinking("<think>a</think>answer") == "a"


def test_what_is_typed_at_the_prompt_is_computed_ahead_and_the_turn_sends_exactly_that(repo: Path, pipe,
                                                                                       monkeypatch) -> None:
    import threading

    import app.controller.model_session as ms

    monkeypatch.setattr(ms, "TYPING_PAUSE_S", 0.05)
    engine = ScriptedEngine(["It returns 'hello'."])
    ui, out = plain(repo, engine, pipe)

    seen: list[bool] = []

    def drive() -> None:  # the keyboard: the main thread is in the prompt
        try:
            seen.append(wait_until(lambda: len(engine.primed) == 1))  # the conversation, computed at open
            pipe.send_text("what does a.py do")
            seen.append(wait_until(lambda: any("user\nwhat does a.py do\n" in p for p in engine.primed)))
            pipe.send_text("\r")
            seen.append(wait_until(lambda: len(engine.prompts) == 1 and not ui.model.busy))
        finally:
            pipe.send_text("\x04")

    keys = threading.Thread(target=drive)
    keys.start()
    assert ui.loop() == 0
    keys.join()
    assert seen == [True, True, True]
    assert "def greet" in engine.primed[-1]  # the file it names is attached, as the turn attaches it
    assert engine.prompts[0] == engine.primed[-1]  # the turn's first prompt is exactly what was computed
    assert "It returns 'hello'." in out.getvalue()
