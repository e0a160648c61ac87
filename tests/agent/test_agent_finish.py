"""Headless runs push back on answers that are not done: a fix shown but not applied, tests
still failing, edits made after the last failing run; at most MAX_NUDGES times a turn."""

from agent_helpers import call, make_agent

from app.agent.finish import MAX_NUDGES, TurnFacts, has_code_block, premature
from app.events import Final, Notice
from engine.scripted import ScriptedEngine

SHOWN_FIX = "The bug is in add:\n```python\ndef add(a, b):\n    return a + b\n```\nThe tests should pass now."


def test_code_block_detection():
    assert has_code_block(SHOWN_FIX)
    assert not has_code_block("Use ```pytest``` to run them.")
    assert not has_code_block("```\nonly-one-line\n```")
    assert not has_code_block("Fixed add(): it subtracted.")


def test_premature_rules():
    assert "NOT applied" in premature(TurnFacts(), SHOWN_FIX)
    assert premature(TurnFacts(), "Nothing to change: add() is correct.") is None
    edited = TurnFacts()
    edited.edited()
    assert premature(edited, SHOWN_FIX) is None  # a summary with code after a real edit is fine
    failing = TurnFacts()
    failing.ran("python -m pytest -q", 1)
    msg = premature(failing, "All good.")
    assert msg and "exit code 1" in msg and "python -m pytest -q" in msg
    failing.edited()
    assert "Run it again" in premature(failing, "Fixed.")
    failing.ran("python -m pytest -q", 0)
    assert premature(failing, "Fixed.") is None
    tired = TurnFacts(nudges=MAX_NUDGES)
    assert premature(tired, SHOWN_FIX) is None


def test_shown_fix_is_pushed_back_until_applied_and_tested(repo):
    engine = ScriptedEngine([
        call("run_shell", command="python -c 'import calc, sys; sys.exit(calc.add(2, 3) != 5)'"),
        SHOWN_FIX,  # pushed back: nothing was edited
        call("edit_file", path="calc.py", search="    return a - b", replace="    return a + b"),
        "Fixed add().",  # pushed back: the last run failed and it was not rerun
        call("run_shell", command="python -c 'import calc, sys; sys.exit(calc.add(2, 3) != 5)'"),
        "Fixed add(): it subtracted.",
    ])
    agent, rec = make_agent(engine, repo, mode="full-auto", insist=True)
    final = agent.run_turn("add() is wrong, fix it")
    assert final == Final("done", "Fixed add(): it subtracted.")
    assert "return a + b" in (repo / "calc.py").read_text()
    notices = [n.message for n in rec.of(Notice) if n.message.startswith("not done yet")]
    assert len(notices) == 2 and "NOT applied" in notices[0] and "Run it again" in notices[1]
    assert "NOT applied" in engine.prompts[2]  # the model saw the push-back, with the call format
    assert '<tool_call>\n{"name": "edit_file", "arguments": {"path": "FILE", "search"' in engine.prompts[2]


def test_push_back_gives_up_after_max_nudges(repo):
    engine = ScriptedEngine([SHOWN_FIX] * (MAX_NUDGES + 1))
    agent, rec = make_agent(engine, repo, mode="full-auto", insist=True)
    final = agent.run_turn("fix add")
    assert final.status == "done" and len(engine.prompts) == MAX_NUDGES + 1
    assert (repo / "calc.py").read_text().count("a - b") == 1  # nothing applied behind its back


def test_interactive_agent_accepts_answers_with_code(repo):
    engine = ScriptedEngine([SHOWN_FIX])
    agent, _ = make_agent(engine, repo)
    assert agent.run_turn("how would I fix add?") == Final("done", SHOWN_FIX)
    assert len(engine.prompts) == 1
