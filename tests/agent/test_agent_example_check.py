"""A job with no test command is judged by the docstring examples of what it changes: the edit
rounds iterate on them, a final answer is pushed back while they fail, and the final event says
whether they hold."""

import pytest
from agent_helpers import call, make_agent

from app.events import Notice
from engine.scripted import ScriptedEngine
from tools import sandbox_host as host

pytestmark = pytest.mark.skipif(host.find_bwrap() is None, reason="bubblewrap cannot run here (apt install bubblewrap)")

DOC = '    """Add two numbers.\n\n    >>> add(2, 3)\n    5\n    """\n'
MUL = "def mul(a, b):\n    return a * b\n"


def source(body: str) -> str:
    return f"def add(a, b):\n{DOC}    {body}\n\n\n{MUL}"


def whole(body: str) -> str:
    return f"calc.py\n```python\n{source(body)}```\n"


def edit(old: str, new: str) -> str:
    return call("edit_file", path="calc.py", search=f"    {old}\n\n\ndef mul", replace=f"    {new}\n\n\ndef mul")


@pytest.fixture
def examples_repo(repo):
    (repo / "calc.py").write_text(source("return a - b"))
    return repo


def test_the_rounds_iterate_on_the_examples_when_there_is_no_test_command(examples_repo):
    engine = ScriptedEngine([whole("return a * b"), whole("return a + b")])
    agent, rec = make_agent(engine, examples_repo, mode="full-auto", insist=True)
    final = agent.run_turn("add() in calc.py is wrong, fix it")
    assert final.status == "done" and "return a + b" in (examples_repo / "calc.py").read_text()
    assert final.check["source"] == "examples" and final.check["passed"] is True
    assert final.reason == "1 of 1 docstring examples hold"
    # the second round was a fresh try told what the first one's code gave
    assert "failed the check `docstring examples`" in engine.prompts[1] and "add(2, 3)" in engine.prompts[1]
    assert "6" in engine.prompts[1]


def test_a_final_answer_is_pushed_back_while_the_examples_fail(examples_repo):
    engine = ScriptedEngine([edit("return a - b", "return a * b"), "Fixed.",
                             edit("return a * b", "return a + b"), "Fixed for real."])
    agent, rec = make_agent(engine, examples_repo, mode="full-auto", insist=True)
    final = agent.run_turn("add() is wrong, fix it")  # names no file: the tool loop, no rounds
    assert final.status == "done" and final.message == "Fixed for real."
    assert final.check["passed"] is True
    assert "docstring examples of the functions you changed: 0 of 1" in engine.prompts[2]
    assert any(n.message.startswith("0 of 1 docstring examples hold") for n in rec.of(Notice))


def test_examples_that_still_fail_make_a_failed_run(examples_repo):
    engine = ScriptedEngine([edit("return a - b", "return a * b"), "Fixed.", "It is fixed.", "Done.", "Really done."])
    agent, _ = make_agent(engine, examples_repo, mode="full-auto", insist=True)
    final = agent.run_turn("add() is wrong, fix it")
    assert final.status == "failed" and final.check["passed"] is False
    assert final.reason.startswith("the docstring examples still fail: 0 of 1")
    assert final.message == "Done."  # two push-backs, then the run ends and says so
    assert "a * b" in (examples_repo / "calc.py").read_text()  # the edit stays, for the user to judge


def test_examples_run_only_where_shell_commands_run_unasked(examples_repo):
    engine = ScriptedEngine([edit("return a - b", "return a * b"), "Fixed."])
    agent, _ = make_agent(engine, examples_repo, mode="auto-edit", insist=True)
    final = agent.run_turn("add() is wrong, fix it")
    assert final.status == "done" and final.check["ran"] is False
    assert final.reason == "no docstring examples checked: shell commands need --mode full-auto"


def test_a_test_command_is_the_judge_where_there_is_one(examples_repo):
    (examples_repo / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    engine = ScriptedEngine([whole("return a + b")])
    agent, _ = make_agent(engine, examples_repo, mode="full-auto", insist=True)
    final = agent.run_turn("add() in calc.py is wrong, fix it")
    assert final.check["source"] == "workspace" and final.check["passed"] is True
