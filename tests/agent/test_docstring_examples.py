"""tau edit checks the changed functions against their docstring examples, in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.agent import example_run
from app.agent.direct_edit import plan_edit
from app.agent.examples import changed_functions, find_examples
from app.cli.main import main
from engine.scripted import ScriptedEngine
from tools import sandbox_host as host

needs_bwrap = pytest.mark.skipif(host.find_bwrap() is None, reason="bubblewrap cannot run here (apt install bubblewrap)")

STUB = '''import math


def fix_spaces(text):
    """Replace spaces with underscores, and runs of 3 or more spaces with one dash.

    fix_spaces("Example 1") == "Example_1"
    * fix_spaces(" Example   3") -> "_Example-3"
    >>> fix_spaces("a  b")
    'a__b'
    Calling fix_spaces(text) on anything else returns a string.
    fix_spaces(abc) => abc
    fix_spaces("x y") returns "x_y"
    helper(1) == 2
    """
    raise NotImplementedError


def helper(x):
    return x + 1
'''
NAIVE = STUB.replace("    raise NotImplementedError\n", "    return text.replace(' ', '_')\n")
RIGHT = STUB.replace("    raise NotImplementedError\n", (
    "    import re\n"
    "    text = re.sub(' {3,}', '-', text)\n"
    "    return text.replace(' ', '_')\n"))
WRONG = STUB.replace("    raise NotImplementedError\n", "    return ''\n")


def test_examples_are_read_from_the_forms_docstrings_use():
    found = find_examples(STUB)
    assert [(e.call, e.expected) for e in found] == [
        ('fix_spaces("Example 1")', '"Example_1"'),
        ('fix_spaces(" Example   3")', '"_Example-3"'),
        ('fix_spaces("a  b")', "'a__b'"),
        ('fix_spaces("x y")', '"x_y"'),
    ]  # prose, notation with unquoted strings and a call of another function are not examples
    assert found[0].line == 7 and {e.function for e in found} == {"fix_spaces"}
    assert find_examples(STUB, ["helper"]) == [] and find_examples("def (:") == []
    assert changed_functions(STUB, NAIVE) == ["fix_spaces"]


@needs_bwrap
def test_the_examples_run_against_the_new_text_without_writing_it(tmp_path: Path):
    (tmp_path / "solution.py").write_text(STUB)
    found = find_examples(STUB)
    report = example_run.run_examples(tmp_path, "solution.py", NAIVE, found)
    assert report.ran and not report.error and report.passed == 3
    assert [r.describe() for r in report.failed] == [
        """fix_spaces(" Example   3") gave '_Example___3'; the docstring says "_Example-3\""""]
    assert example_run.run_examples(tmp_path, "solution.py", RIGHT, found).ok
    assert (tmp_path / "solution.py").read_text() == STUB
    broken = example_run.run_examples(tmp_path, "solution.py", RIGHT + "\nundefined_name + 1\n", found)
    assert broken.ran and "NameError" in broken.error and not broken.ok
    # a package the sandbox's Python lacks: nothing can be judged, so nothing is held against the edit
    missing = example_run.run_examples(tmp_path, "solution.py", "import no_such_module\n" + RIGHT, found)
    assert not missing.ran and "No module named 'no_such_module'" in missing.error


@needs_bwrap
def test_an_endless_loop_is_stopped(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(example_run, "TIMEOUT_S", 1.0)
    looping = STUB.replace("    raise NotImplementedError\n", "    while True:\n        pass\n")
    report = example_run.run_examples(tmp_path, "solution.py", looping, find_examples(STUB))
    assert report.ran and "did not finish" in report.error


@needs_bwrap
def test_failing_examples_go_back_to_the_model_until_they_hold(tmp_path: Path):
    (tmp_path / "solution.py").write_text(STUB)
    engine = ScriptedEngine([f"solution.py\n```python\n{NAIVE}```\n", f"solution.py\n```python\n{RIGHT}```\n"])
    outcome = plan_edit(engine, tmp_path, ["solution.py"], "implement fix_spaces", examples=True)
    assert outcome.generations == 2 and outcome.changes[0].new == RIGHT
    assert outcome.examples is not None and outcome.examples.ok and outcome.examples.passed == 4
    # the second try is a fresh sampled one from the original file, told what failed
    assert """fix_spaces(" Example   3") gave '_Example___3'""" in engine.prompts[1]
    assert "raise NotImplementedError" in engine.prompts[1] and "return text.replace" not in engine.prompts[1]
    assert engine.requests[0].sampling.temperature == 0 and engine.requests[1].sampling.temperature > 0


@needs_bwrap
def test_the_attempt_with_the_fewest_failures_is_kept(tmp_path: Path):
    (tmp_path / "solution.py").write_text(STUB)
    replies = [NAIVE, WRONG, WRONG]
    engine = ScriptedEngine([f"solution.py\n```python\n{r}```\n" for r in replies])
    outcome = plan_edit(engine, tmp_path, ["solution.py"], "implement fix_spaces", examples=True, example_retries=2)
    assert outcome.generations == 3 and outcome.changes[0].new == NAIVE and not outcome.failures
    assert outcome.examples is not None and len(outcome.examples.failed) == 1


@needs_bwrap
def test_an_example_the_edit_rewrote_is_not_held_against_it(tmp_path: Path):
    (tmp_path / "solution.py").write_text(NAIVE)
    dashes = NAIVE.replace('"_Example-3"', '"_Example___3"')
    engine = ScriptedEngine([f"solution.py\n```python\n{dashes}```\n"])
    outcome = plan_edit(engine, tmp_path, ["solution.py"], "keep every space as an underscore", examples=True)
    assert outcome.generations == 1 and outcome.examples is not None and outcome.examples.ok


@needs_bwrap
def test_tau_edit_reports_the_examples_in_json(in_repo, engines, capsys):
    (in_repo / "solution.py").write_text(STUB)
    queue, _ = engines
    queue.append(ScriptedEngine([f"solution.py\n```python\n{NAIVE}```\n"] * 3))
    code = main(["edit", "solution.py", "implement fix_spaces", "--yes", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["applied"]
    assert out["examples"]["ran"] and out["examples"]["passed"] == 3 and out["examples"]["total"] == 4
    assert out["examples"]["failed"][0].startswith('fix_spaces(" Example   3") gave')
    assert out["stats"]["generations"] == 3
    queue.append(ScriptedEngine([f"solution.py\n```python\n{NAIVE}```\n"]))
    (in_repo / "solution.py").write_text(STUB)
    main(["edit", "solution.py", "implement fix_spaces", "--yes", "--json", "--no-examples"])
    assert json.loads(capsys.readouterr().out)["examples"] is None
