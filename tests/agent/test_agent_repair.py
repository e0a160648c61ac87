"""A job with a check starts with edit-and-test rounds: the named file is rewritten whole, the
check runs, its failure goes into the next round, and the tool loop takes over only after."""

from agent_helpers import ROUND_MISSES, call, make_agent

from app.agent.repair import repair_targets
from app.agent.shown_code import is_test_file
from app.events import Notice, ToolCallEvent, ToolResultEvent
from engine.scripted import ScriptedEngine

TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
MUL = "def mul(a, b):\n    return a * b\n"


def whole(body: str) -> str:
    return f"calc.py\n```python\n{body}\n\n{MUL}```\n"


WRONG = whole("def add(a, b):\n    return a * b\n")
RIGHT = whole("def add(a, b):\n    return a + b\n")


def _with_tests(repo):
    (repo / "test_calc.py").write_text(TEST_CALC)
    return repo


def test_test_files_are_never_the_rounds_targets():
    assert [p for p in ["test_a.py", "a_test.go", "web/x.spec.ts", "tests/util.py", "src/a.py", "contest.py"]
            if not is_test_file(p)] == ["src/a.py", "contest.py"]
    files = ["calc.py", "test_calc.py", ".env"]
    assert repair_targets("Fix add in calc.py so test_calc.py passes; see .env", files) == ["calc.py"]
    # the Java eval's task: a JUnit-style test class named beside the solution is not rewritten
    java = ["Problem.java", "TestProblem.java", "Makefile"]
    task = "Implement the function add in Problem.java. The tests in TestProblem.java must pass: run them with `make test`."
    assert repair_targets(task, java) == ["Problem.java"]


def test_a_failing_round_feeds_the_check_output_into_the_next(repo):
    engine = ScriptedEngine([WRONG, RIGHT])
    agent, rec = make_agent(engine, _with_tests(repo), mode="full-auto", insist=True)
    final = agent.run_turn("add() in calc.py is wrong, fix it. Run `python -m pytest -q`.")
    assert final.status == "done" and final.check["passed"] is True
    assert (repo / "calc.py").read_text().startswith("def add(a, b):\n    return a + b\n")
    assert (repo / "test_calc.py").read_text() == TEST_CALC
    shell = [r for r in rec.of(ToolResultEvent) if r.name == "run_shell"]
    assert [r.exit_code for r in shell] == [1, 0]
    assert "failed the check `python -m pytest -q`" in engine.prompts[1] and "assert 6 == 5" in engine.prompts[1]
    assert "add(a, b):\n    return a - b" in engine.prompts[1]  # a fresh try from the original
    assert "add(a, b):\n    return a * b" not in engine.prompts[1]
    assert engine.requests[0].sampling.temperature == 0 and engine.requests[1].sampling.temperature > 0
    assert agent.undo().restored == ("calc.py",)  # the rounds' writes are the turn's, for /undo


def test_rounds_that_never_pass_hand_over_to_the_tool_loop_with_what_failed(repo):
    engine = ScriptedEngine([WRONG, WRONG, whole("def add(a, b):\n    return b - a\n"),
                             call("edit_file", path="calc.py", search="b - a\n\n\ndef mul", replace="a + b\n\n\ndef mul"),
                             "Fixed."])
    agent, rec = make_agent(engine, _with_tests(repo), mode="full-auto", insist=True, max_steps=5)
    final = agent.run_turn("add() in calc.py is wrong, fix it")
    assert final.status == "done" and final.check["passed"] is True
    assert [r.sampling.seed for r in engine.requests[:3]] == [None, 1002, 1003]  # later rounds sample, seeded
    assert "tau rewrote calc.py and ran the check" in engine.prompts[3] and "return b - a" in engine.prompts[3]
    rounds = [n.message for n in rec.of(Notice) if n.message.startswith("edit round")]
    assert rounds == ["edit round 1: calc.py", "edit round 2: calc.py (a fresh try, told what failed)",
                      "edit round 2 changed nothing: the same code as an earlier round",
                      "edit round 3: calc.py (a fresh try, told what failed)"]
    shell = [r for r in rec.of(ToolResultEvent) if r.name == "run_shell"]
    assert [r.exit_code for r in shell] == [1, 1, 0]  # code already tried is not checked again


def test_the_targets_are_the_named_files_or_else_the_only_source_file():
    files = ["stats.py", "test_stats.py", "README.md", "pyproject.toml"]
    assert repair_targets("the mean is wrong, fix it", files) == ["stats.py"]
    assert repair_targets("the mean is wrong, fix it", [*files, "util.py"]) == []  # which one: not a guess
    assert repair_targets("fix util.py", [*files, "util.py"]) == ["util.py"]
    assert repair_targets("make test_stats.py pass", files) == ["stats.py"]  # with a check: the tests judge it
    assert repair_targets("the mean is wrong, see config/.env", [*files, "config/.env"]) == []  # named, not tau's to rewrite


def test_a_job_about_the_tests_without_a_check_gets_no_round_on_the_source(tmp_path):
    ws = tmp_path / "ws"  # the sessions' state dir lives in tmp_path, outside the workspace
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (ws / "test_calc.py").write_text(TEST_CALC)
    engine = ScriptedEngine([call("edit_file", path="test_calc.py", search="== 5", replace="== 5\n    assert add(0, 0) == 0"),
                             "Added a case."])
    agent, rec = make_agent(engine, ws, mode="auto-edit", insist=True)  # the found pytest may not run here
    assert agent.run_turn("Add a test case for zeros to test_calc.py").message == "Added a case."
    assert not [n for n in rec.of(Notice) if n.message.startswith("edit round")]
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_without_a_check_tau_may_run_one_round_writes_the_named_file(repo):
    _with_tests(repo)
    engine = ScriptedEngine([RIGHT])
    agent, rec = make_agent(engine, repo, mode="auto-edit", insist=True)  # a found check needs full-auto
    final = agent.run_turn("add() in calc.py is wrong, fix it")
    assert final.status == "done" and final.message == "Changed calc.py."
    assert final.check["ran"] is False and "full-auto" in final.reason  # it says the check did not run
    assert (repo / "calc.py").read_text().startswith("def add(a, b):\n    return a + b\n")
    assert engine.requests[0].sampling.temperature == 0 and len(engine.requests) == 1
    assert "edit round: calc.py (no check to run)" in [n.message for n in rec.of(Notice)]
    assert agent.undo().restored == ("calc.py",)


def test_a_round_that_writes_nothing_hands_over_to_the_tool_loop(repo):
    engine = ScriptedEngine([*ROUND_MISSES, call("edit_file", path="calc.py", search="a - b", replace="a + b"), "Fixed."])
    agent, rec = make_agent(engine, repo, insist=True)
    assert agent.run_turn("fix add in calc.py").message == "Fixed."
    assert "return a + b" in (repo / "calc.py").read_text()
    assert any(n.message.startswith("edit round changed nothing") for n in rec.of(Notice))


def test_a_rename_the_round_left_undone_goes_on_in_the_tool_loop(repo):
    unrenamed = whole('def add(a, b):\n    """Add."""\n    return a - b\n')  # changed, but add is still add
    engine = ScriptedEngine([unrenamed, call("edit_file", path="calc.py", search="def add(", replace="def plus("), "Renamed."])
    agent, rec = make_agent(engine, repo, insist=True)
    final = agent.run_turn("Rename the function add to plus in calc.py.")
    assert "calc.py:1: def add(a, b):" in engine.prompts[1]  # the round's leftover, told to the tool loop
    assert final.message == "Renamed." and "def plus(a, b):" in (repo / "calc.py").read_text()


def test_no_round_for_a_question_or_without_a_file_to_edit(repo):
    engine = ScriptedEngine(["It subtracts."])
    agent, rec = make_agent(engine, repo, insist=True)
    agent.run_turn("what does add in calc.py do?")
    assert not [n for n in rec.of(Notice) if n.message.startswith("edit round")]
    engine = ScriptedEngine(["Nothing to do."])
    agent, rec = make_agent(engine, repo, mode="full-auto", insist=True)
    agent.run_turn("add() is wrong, fix it")  # names no file, and calc.py is not the workspace's only source
    assert not [c for c in rec.of(ToolCallEvent) if c.name == "write_file"]
