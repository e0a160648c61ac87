"""Tests as the judge of a headless run: the check is found, run by tau after the edits, pushed
back while it fails, and the final event and exit code say whether it passed."""

import json

from agent_helpers import call, make_agent

from app.agent.checks import Check, CheckState, find_check, named_check, workspace_check
from app.cli.main import main
from app.events import Notice, ToolCallEvent, ToolResultEvent
from engine.scripted import ScriptedEngine

TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
WRONG = call("edit_file", path="calc.py", search="    return a - b", replace="    return a * b")
RIGHT = call("edit_file", path="calc.py", search="    return a * b\n\n\ndef mul", replace="    return a + b\n\n\ndef mul")


def test_the_check_comes_from_the_flag_the_task_agents_md_or_the_workspace(tmp_path):
    assert named_check("Fix it (run the tests with `python -m pytest -q`).") == "python -m pytest -q"
    assert named_check("Use `ls` and then:\n$ npm test\n") == "npm test"
    assert named_check("Fix the bug in `calc.py`.") is None
    files = ["calc.py"]
    assert find_check(tmp_path, "fix it", "", files) is None
    assert find_check(tmp_path, "fix it", "Run `make test` before you finish.", files).source == "instructions"
    got = find_check(tmp_path, "run `cargo test -q`", "Run `make test`.", files, flag=None)
    assert (got.command, got.source, got.explicit) == ("cargo test -q", "task", True)
    assert find_check(tmp_path, "run `cargo test`", "", files, flag="tox -q").source == "flag"
    assert workspace_check(tmp_path, ["pkg/a.py", "tests/test_a.py"]).endswith("-m pytest -q")
    (tmp_path / "package.json").write_text('{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}')
    assert workspace_check(tmp_path, ["package.json"]) is None
    (tmp_path / "package.json").write_text('{"scripts": {"test": "jest"}}')
    assert workspace_check(tmp_path, ["package.json"]) == "npm test"
    assert workspace_check(tmp_path, ["go.mod"]) == "go test ./..." and workspace_check(tmp_path, ["Cargo.toml"]) == "cargo test"
    assert workspace_check(tmp_path, ["pom.xml", "src/test/java/AppTest.java"]) == "mvn -q test"
    assert workspace_check(tmp_path, ["build.gradle.kts", "gradlew", "settings.gradle.kts"]) == "./gradlew test"
    assert workspace_check(tmp_path, ["build.gradle"]) == "gradle test"
    assert workspace_check(tmp_path, ["lib/pom.xml"]) is None  # a nested module's build file is not the root's
    found = find_check(tmp_path, "fix it", "", ["a.py", "test_a.py"])
    assert found.source == "workspace" and not found.explicit


def test_a_makefile_with_a_test_or_check_rule_is_the_workspace_check(tmp_path):
    (tmp_path / "Makefile").write_text("CXX := g++\ntest := unused\n\nall: app\n\tg++ -o app main.cpp\n")
    assert workspace_check(tmp_path, ["Makefile", "main.cpp"]) is None  # a variable named test is not a rule
    (tmp_path / "Makefile").write_text("all: app\n\ncheck: app\n\t./app --self-test\n")
    assert workspace_check(tmp_path, ["Makefile", "main.cpp"]) == "make check"
    (tmp_path / "Makefile").write_text("test: t\n\t./t\n")
    assert find_check(tmp_path, "fix it", "", ["Makefile", "main.cpp"]) == Check("make test", "workspace")


def test_check_state_follows_edits_and_runs(tmp_path):
    st = CheckState(find_check(tmp_path, "run `pytest -q`", "", []))
    assert st.passed is None and not st.ran("pytest", 0, "")  # another command
    assert st.ran("pytest  -q", 1, "1 failed") and st.passed is False
    st.edited()
    assert st.passed is None
    st.ran("pytest -q", 0, "ok", by_tau=True)
    assert st.report() == {"command": "pytest -q", "source": "task", "ran": True, "passed": True,
                           "exit_code": 0, "output_tail": "ok"}


def _with_tests(repo):
    (repo / "test_calc.py").write_text(TEST_CALC)
    return repo


def test_tau_runs_the_check_after_the_edits_and_keeps_going_until_it_passes(repo):
    engine = ScriptedEngine([WRONG, "Fixed add().", RIGHT, "Fixed add() for real."])
    agent, rec = make_agent(engine, _with_tests(repo), mode="full-auto", insist=True)
    final = agent.run_turn("add() is wrong, fix it")
    assert final.status == "done" and final.message == "Fixed add() for real."
    assert final.check["passed"] is True and final.check["source"] == "workspace"
    assert final.reason == "the check passed"
    shell = [r for r in rec.of(ToolResultEvent) if r.name == "run_shell"]
    assert [r.exit_code for r in shell] == [1, 0]  # tau ran it after each answer that followed an edit
    assert "it fails (exit code 1)" in engine.prompts[2] and "assert" in engine.prompts[2]
    assert any("run the check" in n.message for n in rec.of(Notice))


def test_a_check_that_still_fails_at_the_step_limit_is_a_failed_run(repo):
    engine = ScriptedEngine([WRONG, "Fixed add().", "It is fixed, trust me.", "Done."])
    agent, rec = make_agent(engine, _with_tests(repo), mode="full-auto", insist=True, max_steps=4)
    final = agent.run_turn("add() is wrong, fix it")
    assert final.status == "limit" and final.check["passed"] is False
    assert "still fails" in final.reason
    assert len([c for c in rec.of(ToolCallEvent) if c.name == "run_shell"]) == 1  # no edit since: not rerun


def test_a_found_check_needs_full_auto_an_explicit_one_runs_anyway(repo):
    engine = ScriptedEngine([WRONG, "Fixed add()."])
    agent, rec = make_agent(engine, _with_tests(repo), mode="auto-edit", insist=True)
    final = agent.run_turn("add() is wrong, fix it")
    assert final.status == "done" and final.check["ran"] is False and "full-auto" in final.reason
    assert not any(c.name == "run_shell" for c in rec.of(ToolCallEvent))
    engine = ScriptedEngine([RIGHT.replace("a * b\\n\\n", "a - b\\n\\n"), "Fixed add()."])
    agent, rec = make_agent(engine, repo, mode="auto-edit", insist=True, check="python -m pytest -q -p no:cacheprovider")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
    final = agent.run_turn("add() is wrong, fix it")
    assert final.status == "done" and final.check["passed"] is True and final.check["source"] == "flag"


def test_tau_run_exit_code_and_final_event_follow_the_check(in_repo, engines, capsys):
    _with_tests(in_repo)
    queue, _ = engines
    queue.append(ScriptedEngine([WRONG, "Fixed add().", "Fixed.", "Fixed!"]))
    code = main(["run", "fix add (run `python -m pytest -q -p no:cacheprovider`)", "--json", "--max-steps", "4"])
    final = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert code == 1 and final["type"] == "final" and final["status"] == "limit"
    assert final["check"]["passed"] is False and final["check"]["source"] == "task" and "still fails" in final["reason"]
    queue.append(ScriptedEngine([RIGHT.replace("a * b\\n\\n", "a - b\\n\\n"), "Fixed add()."]))
    (in_repo / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
    code = main(["run", "fix add", "--json", "--check", "python -m pytest -q -p no:cacheprovider"])
    final = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert code == 0 and final["status"] == "done" and final["check"]["passed"] is True



def test_a_whole_file_in_a_fence_after_a_failed_check_is_written_and_checked(repo):
    # the agent's format for small files: the path, then the whole new file in a fence
    fixed = "calc.py\n```python\ndef add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n```"
    engine = ScriptedEngine([WRONG, "Fixed add().", fixed, "Fixed add() now."])
    agent, rec = make_agent(engine, _with_tests(repo), mode="full-auto", insist=True)
    final = agent.run_turn("add() is wrong, fix it")
    assert final.status == "done" and final.check["passed"] is True, final
    assert [c.name for c in rec.of(ToolCallEvent)] == ["edit_file", "run_shell", "edit_file", "run_shell"]  # per definition
    assert "return a + b" in (repo / "calc.py").read_text()


def test_an_answer_repeated_word_for_word_after_a_push_back_makes_the_next_reply_sampled(repo):
    from agent_helpers import Recorder, agent_tools

    from app.agent import Agent
    from app.config import Config
    from tools.permissions_types import approve_all

    engine = ScriptedEngine([WRONG, "Fixed add().", "Fixed add().", RIGHT, "Fixed for real."])
    agent = Agent(engine, _with_tests(repo), config=Config(mode="full-auto", max_steps=8, temperature=0.0),
                  approver=approve_all, on_event=Recorder(), tools=agent_tools(), insist=True)
    final = agent.run_turn("add() is wrong, fix it")
    assert final.status == "done" and final.check["passed"] is True
    temps = [r.sampling.temperature for r in engine.requests]
    assert temps[:3] == [0.0, 0.0, 0.0]  # greedy until an answer came back unchanged
    assert all(t >= 0.6 for t in temps[3:]) and engine.requests[3].sampling.seed is not None


def test_a_check_run_that_hangs_past_its_timed_runs_is_cut_short(repo, monkeypatch):
    # a sampled try with an endless loop would hold its check for 600 s; once the check has finished
    # in a known time, a run many times as long is a hang and is killed
    from app.agent import checks

    monkeypatch.setattr(checks, "HANG_FLOOR_S", 1, raising=False)
    monkeypatch.setattr(checks, "HANG_FACTOR", 2, raising=False)
    (repo / "test_hang.py").write_text(
        "import pathlib, time\n\n\n"
        "def test_runs():\n"
        "    p = pathlib.Path('runs.txt')\n"
        "    n = int(p.read_text()) if p.exists() else 0\n"
        "    p.write_text(str(n + 1))\n"
        "    if n:\n"
        "        time.sleep(30)  # the second run hangs\n"
        "    assert False\n"
    )
    engine = ScriptedEngine([WRONG, "Fixed add().", RIGHT, "Fixed add() for real.", "Done.", "Done."])
    agent, rec = make_agent(engine, repo, mode="full-auto", insist=True, max_steps=5)
    final = agent.run_turn("add() is wrong, fix it; run `python -m pytest -q test_hang.py`")
    checks_run = [c for c in rec.of(ToolCallEvent) if c.name == "run_shell"]
    results = [r for r in rec.of(ToolResultEvent) if r.name == "run_shell"]
    assert [c.arguments["timeout"] for c in checks_run][:1] == [600]  # not timed yet
    assert len(checks_run) >= 2 and checks_run[1].arguments["timeout"] < 30
    assert "timed out after" in results[1].output
    assert final.status != "done" and final.check["passed"] is False
