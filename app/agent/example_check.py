"""Docstring examples as a job's check when it has no test command.

A job (``tau run``) with no check named or found still has a judge where the code carries
one: the examples in the docstrings of the functions it changes (``>>> f(2)`` then ``4``,
``f(2) == 4``, ``f(2) -> 4``; ``app.agent.examples``). They run in the shell sandbox against
the files as the edits left them (``app.agent.example_run``), like ``tau edit``'s check, and
the agent's check machinery treats the result as a check's: the edit rounds iterate on it,
the final answer is pushed back while the examples fail, and the final event and exit code
say whether they hold. Only the examples the user wrote count: one the edit rewrote is the
new intent, not a check on it.
"""

from __future__ import annotations

from pathlib import Path

from app.agent.checks import Check
from app.agent.confined import read_confined
from app.agent.direct_edit import FileChange, check_examples
from app.agent.example_run import ExampleReport
from app.agent.examples import find_examples
from app.agent.shown_code import is_test_file
from tools.secret_files import is_secret_path

COMMAND = "docstring examples"
SOURCE = "examples"
MAX_FILES = 64  # Python files with examples kept from the turn's start
MAX_FILE_BYTES = 200_000
MAX_PUSHBACKS = 2  # final answers pushed back while examples fail (they may be the user's shorthand)


def examples_check() -> Check:
    return Check(COMMAND, SOURCE)


def is_examples(check: Check) -> bool:
    return check.source == SOURCE


def example_base(root: Path, files: list[str]) -> dict[str, str]:
    """The workspace's Python files (not tests, not secrets) whose docstrings hold examples, as
    the turn starts: what the examples are checked against and what counts as changed."""
    out: dict[str, str] = {}
    for f in files:
        if not f.endswith(".py") or is_test_file(f) or is_secret_path(f):
            continue
        text = read_confined(root, f, MAX_FILE_BYTES)
        if text and find_examples(text):
            out[f] = text
            if len(out) >= MAX_FILES:
                break
    return out


def run_example_check(root: Path, base: dict[str, str]) -> ExampleReport | None:
    """The examples of every function the turn changed in ``base``'s files, run against the
    files now; None when no changed function has examples of the user's."""
    changes = [FileChange(p, old, new, "") for p, old in base.items()
               if (new := read_confined(root, p, MAX_FILE_BYTES)) is not None and new != old]
    return check_examples(root, changes) if changes else None


def report_output(report: ExampleReport) -> str:
    """The check's output: how many hold, and what the failing ones gave."""
    head = f"{report.passed} of {len(report.results)} docstring examples hold"
    return head if report.ok else f"{head}\n{report.feedback()}"


def examples_nudge(output: str) -> str:
    """The push-back while the examples do not hold."""
    return (f"tau ran the docstring examples of the functions you changed: {output}\n"
            "They are the user's statement of what the code must do, so the task is not done. Fix the "
            "code for the general case (not by returning the examples' answers), rewrite the file with "
            "write_file, and the examples run again when you answer. If an example is wrong, say why.")
