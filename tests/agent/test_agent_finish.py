"""Headless runs do not take "done" at face value: a fix shown as code is applied (when it
redefines a function of the workspace) or pushed back, failing tests and edits after the last
failing run are pushed back; at most MAX_NUDGES times a turn. Interactive turns only get the
push-back for a reply that announces an action and makes no tool call."""

from agent_helpers import call, make_agent

from app.agent.finish import (
    MAX_NUDGES,
    TurnFacts,
    failure_lines,
    has_code_block,
    premature,
    promised_tool,
    unkept_promise,
)
from app.events import Final, Notice, ToolCallEvent, ToolResultEvent
from engine.scripted import ScriptedEngine

SHOWN_FIX = "The bug is in add:\n```python\ndef add(a, b):\n    return a + b\n```\nThe tests should pass now."
SNIPPET = "Call it like this:\n```python\nx = add(2, 3)\nprint(x)\n```"
FAILING_CHECK = "python -c 'import calc, sys; sys.exit(calc.add(2, 3) != 5)'"


def test_code_block_detection():
    assert has_code_block(SHOWN_FIX)
    assert not has_code_block("Use ```pytest``` to run them.")
    assert not has_code_block("```\nonly-one-line\n```")
    assert not has_code_block("Fixed add(): it subtracted.")


PYTEST_OUT = """F.                                                                       [100%]
=================================== FAILURES ===================================
    def test_add():
>       assert add(2, 3) == 5
E       assert -1 == 5
E        +  where -1 = add(2, 3)

test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED test_calc.py::test_add - assert -1 == 5
1 failed, 1 passed in 1.56s
[exit code 1]"""


def test_failure_lines_pick_what_failed():
    assert failure_lines(PYTEST_OUT) == [
        "E       assert -1 == 5", "E        +  where -1 = add(2, 3)", "FAILED test_calc.py::test_add - assert -1 == 5"]
    assert failure_lines("a\nb\nc\n[exit code 2]", n=2) == ["b", "c"]
    assert failure_lines("") == []


def test_the_failing_check_push_back_quotes_the_failure_and_names_the_files():
    facts = TurnFacts()
    facts.ran("python -m pytest -q", 1, PYTEST_OUT)
    msg = premature(facts, False, files=("calc.py", "test_calc.py"))
    assert "It said:\nE       assert -1 == 5\n" in msg and "include: calc.py, test_calc.py." in msg
    assert "calc.py, test_calc.py" in premature(TurnFacts(), True, files=("calc.py", "test_calc.py"))


def test_premature_rules():
    assert "NOT applied" in premature(TurnFacts(), True)
    assert premature(TurnFacts(), False) is None
    edited = TurnFacts()
    edited.edited()
    assert premature(edited, True) is None  # a summary with code after a real edit is fine
    failing = TurnFacts()
    failing.ran("python -m pytest -q", 1)
    msg = premature(failing, False)
    assert msg and "exit code 1" in msg and "python -m pytest -q" in msg
    failing.edited()
    assert "Run it again" in premature(failing, False)
    failing.ran("python -m pytest -q", 0)
    assert premature(failing, False) is None
    assert premature(TurnFacts(nudges=MAX_NUDGES), True) is None


def test_shown_fix_is_applied_and_the_failing_check_rerun(repo):
    engine = ScriptedEngine([
        call("run_shell", command=FAILING_CHECK),
        SHOWN_FIX,  # no tool call: the shown definition of add replaces the file's, and the check reruns
        "Fixed add(): it subtracted.",
    ])
    agent, rec = make_agent(engine, repo, mode="full-auto", insist=True)
    final = agent.run_turn("add() is wrong, fix it")
    assert final == Final("done", "Fixed add(): it subtracted.")
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
    calls = rec.of(ToolCallEvent)
    assert [c.name for c in calls] == ["run_shell", "edit_file", "run_shell"]
    assert calls[1].arguments == {"path": "calc.py", "search": "def add(a, b):\n    return a - b",
                                  "replace": "def add(a, b):\n    return a + b"}
    assert calls[2].arguments == {"command": FAILING_CHECK}
    assert [r.ok for r in rec.of(ToolResultEvent)] == [False, True, True]  # failing check, edit, passing check
    notices = [n.message for n in rec.of(Notice)]
    assert f"before accepting the answer: edit calc.py, run {FAILING_CHECK}" in notices
    # the conversation records the shown code as the assistant's edit
    edit_msg = next(m for m in agent.messages if m.get("tool_calls") and m["tool_calls"][0]["function"]["name"] == "edit_file")
    assert "```python" in edit_msg["content"]
    assert agent.undo().restored == ("calc.py",) and "a - b" in (repo / "calc.py").read_text()


def test_an_edit_after_a_failing_check_gets_the_check_rerun(repo):
    engine = ScriptedEngine([
        call("run_shell", command=FAILING_CHECK),
        call("edit_file", path="calc.py", search="    return a - b", replace="    return a * 1 + b - 0"),
        "Fixed add().",  # not accepted before the check runs again
        "Fixed add(): it subtracted.",
    ])
    agent, rec = make_agent(engine, repo, mode="full-auto", insist=True)
    assert agent.run_turn("fix add") == Final("done", "Fixed add(): it subtracted.")
    calls = rec.of(ToolCallEvent)
    assert [c.name for c in calls] == ["run_shell", "edit_file", "run_shell"]
    assert rec.of(ToolResultEvent)[2].exit_code == 0
    assert "[exit code 0]" in engine.prompts[3]  # the model saw the check pass


def test_code_that_matches_no_definition_is_pushed_back_with_the_call_format(repo):
    engine = ScriptedEngine([
        SNIPPET,
        call("edit_file", path="calc.py", search="    return a - b", replace="    return a + b"),
        "Fixed add().",
    ])
    agent, rec = make_agent(engine, repo, mode="full-auto", insist=True)
    assert agent.run_turn("fix add") == Final("done", "Fixed add().")
    assert "NOT applied" in engine.prompts[1]
    assert '<tool_call>\n{"name": "edit_file", "arguments": {"path": "FILE", "search"' in engine.prompts[1]
    assert "return a + b" in (repo / "calc.py").read_text()


def test_push_back_gives_up_after_max_nudges(repo):
    engine = ScriptedEngine([SNIPPET] * (MAX_NUDGES + 1))
    agent, _ = make_agent(engine, repo, mode="full-auto", insist=True)
    final = agent.run_turn("fix add")
    assert final.status == "done" and len(engine.prompts) == MAX_NUDGES + 1
    assert "a - b" in (repo / "calc.py").read_text()


def test_a_job_answer_quoting_the_workspace_is_accepted(repo):
    quote = "The second function is mul:\n```python\ndef mul(a, b):\n    return a * b\n```"
    engine = ScriptedEngine([quote])
    agent, _ = make_agent(engine, repo, mode="full-auto", insist=True)
    assert agent.run_turn("what is the second function in calc.py?") == Final("done", quote)
    assert len(engine.prompts) == 1


def test_interactive_agent_accepts_answers_with_code(repo):
    engine = ScriptedEngine([SHOWN_FIX])
    agent, _ = make_agent(engine, repo)
    assert agent.run_turn("how would I fix add?") == Final("done", SHOWN_FIX)
    assert len(engine.prompts) == 1 and "a - b" in (repo / "calc.py").read_text()


def test_a_shown_command_that_was_not_run_this_turn_is_not_run(repo):
    engine = ScriptedEngine(["Done:\n```\n$ rm -rf build\n(removed)\n```", "Nothing to clean."])
    agent, rec = make_agent(engine, repo, mode="full-auto", insist=True)
    assert agent.run_turn("clean up") == Final("done", "Nothing to clean.")
    assert rec.of(ToolCallEvent) == []


def test_a_fix_shown_next_to_a_test_run_is_applied_before_the_run(repo):
    # what the 1.5B model did: the corrected function in a code block plus a run_shell call
    engine = ScriptedEngine([
        SHOWN_FIX + "\n" + call("run_shell", command=FAILING_CHECK),
        "Fixed add().",
    ])
    agent, rec = make_agent(engine, repo, mode="full-auto", insist=True)
    assert agent.run_turn("fix add") == Final("done", "Fixed add().")
    assert [c.name for c in rec.of(ToolCallEvent)] == ["edit_file", "run_shell"]
    assert rec.of(ToolResultEvent)[1].exit_code == 0
    assert "applying the code shown in the message: calc.py" in [n.message for n in rec.of(Notice)]
    # an interactive turn runs only what was called
    engine = ScriptedEngine([SHOWN_FIX + "\n" + call("run_shell", command="true"), "ok"])
    agent, rec = make_agent(engine, repo, mode="full-auto")
    agent.run_turn("fix add")
    assert [c.name for c in rec.of(ToolCallEvent)] == ["run_shell"]


def test_an_announced_action_is_found_in_the_last_sentence():
    said = "To find the second function in `calc.py`, I'll read the file and extract the function definitions."
    assert unkept_promise(said) == said and promised_tool(said) == "read_file"
    assert promised_tool(unkept_promise("The tests fail.\nLet me run them again now.")) == "run_shell"
    assert promised_tool("Next, I will search for the callers.") == "grep"
    for answer in ("The second function is mul.", "Understood, I will not delete it.",
                   "Done. Let me know if you need anything else.",
                   "I'll read the file first.\n\nThe second function is `mul`.",  # the promise was kept
                   "Fixed:\n```python\n# I'll run the tests\nx = 1\n```"):
        assert unkept_promise(answer) is None, answer


def test_a_reply_that_announces_a_call_but_makes_none_is_asked_for_it(repo):
    # what the 1.5B model did in CI after reading the file: announced the read again and stopped
    engine = ScriptedEngine([
        call("read_file", path="calc.py"),
        "To find the second function, I'll read the file and extract the function definitions.",
        "The second function is `mul`.",
    ])
    agent, rec = make_agent(engine, repo, mode="full-auto", insist=True)
    assert agent.run_turn("Name the second function in calc.py.") == Final("done", "The second function is `mul`.")
    assert "made no tool call" in engine.prompts[2]
    assert '{"name": "read_file", "arguments": {"path": "..."}}' in engine.prompts[2]
    assert any("not done yet" in n.message for n in rec.of(Notice))


def test_an_interactive_promise_is_pushed_back_too_but_only_up_to_the_nudge_budget(repo):
    promise = "Let me run the tests."
    engine = ScriptedEngine([promise] * (MAX_NUDGES + 1))
    agent, _ = make_agent(engine, repo)
    final = agent.run_turn("are the tests green?")
    assert final == Final("done", promise) and len(engine.prompts) == MAX_NUDGES + 1
    assert "run_shell" in engine.prompts[1]


def test_an_empty_reply_is_sent_back_rather_than_ending_the_turn_done(repo):
    # what the 1.5B model did once in CI after reading the file: an empty answer, status done
    engine = ScriptedEngine([call("read_file", path="calc.py"), "", "The second function is `mul`."])
    agent, rec = make_agent(engine, repo, mode="full-auto")
    assert agent.run_turn("Name the second function in calc.py.") == Final("done", "The second function is `mul`.")
    assert "reply was empty" in engine.prompts[2]
