"""Run a file's docstring examples against a new text of it, in the shell sandbox.

The text is not written anywhere: a child Python executes it as a module (not as
``__main__``) inside bubblewrap with no network, and evaluates each example's call.
Without bubblewrap nothing runs: a user's code is not executed unconfined unasked.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from app.agent.examples import Example, ExampleResult
from tools.process import run_process
from tools.sandbox import ShellOptions
from tools.sandbox_host import prepare

TIMEOUT_S = 10.0
MAX_SOURCE_BYTES = 100_000  # the text travels in an environment variable (Linux caps one at 128 KiB)

_CHILD = r"""
import ast, json, math, os, sys, types
path = os.environ["TAU_EXAMPLE_PATH"]
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
mod = types.ModuleType(os.path.splitext(os.path.basename(path))[0])
mod.__file__ = os.path.abspath(path)
try:
    exec(compile(os.environ["TAU_EXAMPLE_SOURCE"], path, "exec"), mod.__dict__)
except BaseException as e:
    print("\n" + json.dumps({"error": f"{type(e).__name__}: {e}"}))
    sys.exit(0)
def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
        except TypeError:
            return False
    if type(a) in (list, tuple) and type(a) is type(b) and len(a) == len(b):
        return all(same(x, y) for x, y in zip(a, b))
    return a == b
out = []
for call, want in json.loads(os.environ["TAU_EXAMPLES"]):
    try:
        got = eval(call, mod.__dict__)
        out.append([same(got, ast.literal_eval(want)), repr(got)[:200]])
    except BaseException as e:
        out.append([False, f"{type(e).__name__}: {str(e)[:160]}"])
print("\n" + json.dumps({"results": out}))
"""


@dataclass(frozen=True)
class ExampleReport:
    ran: bool
    results: tuple[ExampleResult, ...] = ()
    error: str = ""  # why they did not run, or what loading the module raised

    @property
    def failed(self) -> list[ExampleResult]:
        return [r for r in self.results if not r.ok]

    @property
    def passed(self) -> int:
        return sum(r.ok for r in self.results)

    @property
    def ok(self) -> bool:
        return self.ran and not self.error and not self.failed

    def feedback(self) -> str:
        """What the model is told when they do not hold."""
        if self.error:
            return f"Running the file failed: {self.error}"
        lines = [f"- {r.describe()}" for r in self.failed]
        return "These examples from the docstrings do not hold:\n" + "\n".join(lines)


def run_examples(root: Path, path: str, source: str, examples: list[Example]) -> ExampleReport:
    """Evaluate ``examples`` against ``source`` as the text of ``root/path``."""
    if not examples:
        return ExampleReport(ran=False, error="no examples")
    if len(source.encode("utf-8")) > MAX_SOURCE_BYTES:
        return ExampleReport(ran=False, error="the file is too large to check its examples")
    # the base interpreter: a virtualenv under /tmp is hidden by the sandbox's private /tmp
    command = f"{shlex.quote(os.path.realpath(sys.executable))} -c {shlex.quote(_CHILD)}"
    env = {**os.environ, "TAU_EXAMPLE_PATH": path, "TAU_EXAMPLE_SOURCE": source,
           "TAU_EXAMPLES": json.dumps([[e.call, e.expected] for e in examples])}
    launch = prepare(command, root, ShellOptions(mode="full-auto", network=False), env)
    if launch.argv is None:
        return ExampleReport(ran=False, error="no sandbox (bubblewrap) to run them in")
    res = run_process(command, root, timeout=TIMEOUT_S, argv=launch.argv, env=launch.env)
    if res.timed_out:
        return ExampleReport(ran=True, error=f"the examples did not finish in {TIMEOUT_S:.0f} s (an endless loop?)")
    for line in reversed(res.output.splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if "error" in data:
                error = str(data["error"])
                if error.startswith(("ModuleNotFoundError", "ImportError")):  # the sandbox's Python lacks a package
                    return ExampleReport(ran=False, error=f"cannot load the file in the sandbox: {error}")
                return ExampleReport(ran=True, error=error)
            pairs = data.get("results", [])
            if len(pairs) != len(examples):
                return ExampleReport(ran=True, error="the check gave a result for only some examples")
            return ExampleReport(ran=True, results=tuple(
                ExampleResult(e, bool(ok), str(got)) for e, (ok, got) in zip(examples, pairs, strict=True)))
    if res.exit_code in (126, 127):  # no interpreter inside the sandbox: nothing was judged
        return ExampleReport(ran=False, error=f"no Python to run them in the sandbox (exit {res.exit_code})")
    return ExampleReport(ran=True, error=f"the check printed nothing usable (exit {res.exit_code})")
