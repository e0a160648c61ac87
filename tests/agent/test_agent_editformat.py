"""Edit formats: small files are rewritten whole (tau edit and the agent's prompt), larger ones
get SEARCH/REPLACE; a whole-file reply that skips code or shows only a function is handled."""

import json

from app.agent.direct_edit import EDIT_SYSTEM, WHOLE_SYSTEM, plan_edit
from app.agent.editformat import (
    SEARCH_REPLACE,
    WHOLE,
    WHOLE_MAX_LINES,
    agent_rule,
    choose_format,
    elided,
    merge_partial,
)
from app.cli.main import main
from engine.scripted import ScriptedEngine

CONFIG = '''def merge(a, b):
    """Merge dict b into a copy of a, recursively."""
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out
'''
SOLUTION = 'from typing import List\n\n\ndef evens(xs: List[int]) -> List[int]:\n    """The even numbers."""\n    raise NotImplementedError\n'


def test_the_format_follows_the_size():
    small, big = "x = 1\n" * 20, "x = 1\n" * (WHOLE_MAX_LINES + 1)
    assert choose_format([small]) == WHOLE and choose_format([small, big]) == SEARCH_REPLACE
    assert choose_format(["y" * 20_000 + "\n"], lambda t: len(t) // 4) == SEARCH_REPLACE  # tokens count too
    assert "write_file" in agent_rule(["write_file", "edit_file"]) and agent_rule(["edit_file"]) == ""


def test_elisions_and_partial_replies():
    assert elided(CONFIG, CONFIG.replace("    return out\n", "    # ... rest of the code unchanged\n"))
    assert elided(CONFIG, CONFIG.replace("merge(", "deep_merge(")) is None
    body = "def evens(xs: List[int]) -> List[int]:\n    return [x for x in xs if x % 2 == 0]\n"
    merged = merge_partial(SOLUTION, body)  # the function alone: the file's import stays
    assert merged == "from typing import List\n\n\n" + body
    assert merge_partial(CONFIG, CONFIG.replace("merge(", "deep_merge(")) is None  # a whole file, renamed
    assert merge_partial(SOLUTION, "from typing import List\n\n\n" + body) is None


def test_tau_edit_rewrites_a_small_file_whole_and_registers_it_with_the_drafter(in_repo, engines, capsys):
    (in_repo / "config.py").write_text(CONFIG)
    queue, made = engines
    renamed = CONFIG.replace("merge(", "deep_merge(")
    queue.append(ScriptedEngine([f"config.py\n```python\n{renamed}```\n"]))
    code = main(["edit", "config.py", "Rename the function merge to deep_merge, including its recursive call.",
                 "--yes", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["applied"] and out["edit_format"] == WHOLE
    assert (in_repo / "config.py").read_text() == renamed  # the def and the recursive call
    assert WHOLE_SYSTEM.splitlines()[1] in made[0].prompts[0]
    assert made[0].contexts["file:config.py"] == CONFIG


def test_tau_edit_uses_search_replace_for_a_large_file(tmp_path):
    big = "".join(f"v{i} = {i}\n" for i in range(WHOLE_MAX_LINES + 5))
    (tmp_path / "big.py").write_text(big)
    engine = ScriptedEngine(["big.py\n<<<<<<< SEARCH\nv3 = 3\n=======\nv3 = 33\n>>>>>>> REPLACE\n"])
    outcome = plan_edit(engine, tmp_path, ["big.py"], "set v3 to 33")
    assert outcome.edit_format == SEARCH_REPLACE and EDIT_SYSTEM.splitlines()[1] in engine.prompts[0]
    assert "v3 = 33\nv4 = 4\n" in outcome.changes[0].new


def test_a_rewrite_that_skips_code_is_sent_back(tmp_path):
    (tmp_path / "config.py").write_text(CONFIG)
    lazy = "config.py\n```python\ndef merge(a, b):\n    # ... existing code unchanged\n    return out\n```\n"
    engine = ScriptedEngine([lazy, f"config.py\n```python\n{CONFIG.replace('dict(a)', 'a.copy()')}```\n"])
    outcome = plan_edit(engine, tmp_path, ["config.py"], "copy with .copy()")
    assert outcome.failures == [] and outcome.generations == 2 and "a.copy()" in outcome.changes[0].new
    assert "skips code" in engine.prompts[1] and "complete new content" in engine.prompts[1]


def test_a_function_only_reply_and_a_usage_example_after_the_file(tmp_path):
    (tmp_path / "solution.py").write_text(SOLUTION)
    reply = ("solution.py\n```python\ndef evens(xs: List[int]) -> List[int]:\n    return [x for x in xs if x % 2 == 0]\n```\n"
             "Use it:\n```python\nprint(evens([1, 2]))\n```\n")
    outcome = plan_edit(ScriptedEngine([reply]), tmp_path, ["solution.py"], "implement evens")
    new = outcome.changes[0].new
    assert new.startswith("from typing import List\n") and "x % 2 == 0" in new and "print" not in new


def test_tau_edit_check_reports_and_sets_the_exit_code(in_repo, engines, capsys):
    queue, _ = engines
    fixed = "calc.py\n```python\ndef add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n```\n"
    check = "python -c 'import calc, sys; sys.exit(calc.add(2, 3) != 5)'"
    queue.append(ScriptedEngine([fixed.replace("a + b", "a + b + 1")]))
    assert main(["edit", "calc.py", "fix add", "--yes", "--json", "--check", check]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["applied"] and out["check"]["ran"] and out["check"]["passed"] is False and out["check"]["exit_code"] == 1
    queue.append(ScriptedEngine([fixed]))
    assert main(["edit", "calc.py", "fix add", "--yes", "--check", check]) == 0
    assert "check `" in capsys.readouterr().err
    queue.append(ScriptedEngine([fixed.replace("a + b", "a + 2 * b")]))
    assert main(["edit", "calc.py", "fix add", "--json", "--check", check]) == 1  # dry run: the check does not run
    assert json.loads(capsys.readouterr().out)["check"] == {"command": check, "ran": False, "passed": None}


def test_a_reply_that_leaves_python_unparsable_is_sent_back_and_never_kept(tmp_path):
    (tmp_path / "config.py").write_text(CONFIG)
    broken = CONFIG.replace("    return out\n", "    return out)\n")
    engine = ScriptedEngine([f"config.py\n```python\n{broken}```\n", f"config.py\n```python\n{CONFIG.replace('dict(a)', 'a.copy()')}```\n"])
    outcome = plan_edit(engine, tmp_path, ["config.py"], "copy with .copy()")
    assert outcome.failures == [] and "a.copy()" in outcome.changes[0].new
    assert "config.py: the new file does not parse (line 9: unmatched ')')" in engine.prompts[1]
    outcome = plan_edit(ScriptedEngine([f"config.py\n```python\n{broken}```\n"]), tmp_path, ["config.py"], "x", retries=0)
    assert outcome.changes == [] and "does not parse" in outcome.failures[0]
    # SEARCH/REPLACE blocks that break the file are dropped together
    big = "".join(f"v{i} = {i}\n" for i in range(WHOLE_MAX_LINES + 5))
    (tmp_path / "big.py").write_text(big)
    blocks = "big.py\n<<<<<<< SEARCH\nv3 = 3\n=======\nv3 = (33\n>>>>>>> REPLACE\n"
    outcome = plan_edit(ScriptedEngine([blocks]), tmp_path, ["big.py"], "set v3", retries=0)
    assert outcome.changes == [] and "big.py: the new file does not parse" in outcome.failures[0]
    # a file that did not parse before is not held to it
    (tmp_path / "wip.py").write_text("def f(:\n    pass\n")
    outcome = plan_edit(ScriptedEngine(["wip.py\n```python\ndef f(:\n    return 1\n```\n"]), tmp_path, ["wip.py"], "x", retries=0)
    assert outcome.failures == [] and "return 1" in outcome.changes[0].new
