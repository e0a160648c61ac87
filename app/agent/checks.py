"""The check that judges a headless run: a test command named by the task (or ``--check``),
by AGENTS.md, or obvious from the workspace (pytest, npm test, go test, cargo test).

``find_check`` is pure apart from looking at a few file names; ``CheckState`` records what the
turn did (edits, runs of the check) and says whether the check passed after the last edit.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

# a command in backticks (or after "$ ") that runs tests
_TEST_WORDS = r"(?:pytest|npm (?:run )?test|yarn test|pnpm test|go test|cargo test|make (?:test|check)|tox\b|unittest|jest|vitest|ctest|mvn test|gradle test)"
_QUOTED = re.compile(rf"`([^`\n]*{_TEST_WORDS}[^`\n]*)`")
_DOLLAR = re.compile(rf"^[ \t]*\$ +([^\n]*{_TEST_WORDS}[^\n]*)$", re.M)
NPM_PLACEHOLDER = "no test specified"
_MAKE_TARGET = re.compile(r"^(test|check)\s*:(?!=)", re.M)  # a rule, not a `test := ...` variable
OUTPUT_TAIL = 1500


@dataclass(frozen=True)
class Check:
    command: str
    source: str  # "flag" | "task" | "instructions" | "workspace"

    @property
    def explicit(self) -> bool:
        """Named by the user for this run: it may run even where shell commands are not allowed."""
        return self.source in ("flag", "task")


def named_check(text: str) -> str | None:
    """The first test command quoted in ``text`` (`python -m pytest -q`, `$ npm test`)."""
    found = [m for m in (_QUOTED.search(text or ""), _DOLLAR.search(text or "")) if m]
    if not found:
        return None
    cmd = min(found, key=lambda m: m.start()).group(1).strip()
    return cmd or None


def _python() -> str:
    return "python" if shutil.which("python") else "python3"


def workspace_check(root: Path, files: list[str]) -> str | None:
    """The obvious test command of the workspace, from the names of its files at its root (Maven's and
    Gradle's for Java) and a Makefile's ``test`` or ``check`` rule, the C and C++ convention."""
    names = set(files)
    if any(Path(f).name.startswith("test_") and f.endswith(".py") or f.endswith("_test.py") for f in files):
        return f"{_python()} -m pytest -q"
    if "package.json" in names:
        try:
            scripts = json.loads((root / "package.json").read_text(encoding="utf-8")).get("scripts") or {}
        except (OSError, ValueError, AttributeError):
            scripts = {}
        test = scripts.get("test") if isinstance(scripts, dict) else None
        if isinstance(test, str) and test.strip() and NPM_PLACEHOLDER not in test:
            return "npm test"
    if "go.mod" in names:
        return "go test ./..."
    if "Cargo.toml" in names:
        return "cargo test"
    if "pom.xml" in names:
        return "mvn -q test"
    if "gradlew" in names:
        return "./gradlew test"
    if names & {"build.gradle", "build.gradle.kts"}:
        return "gradle test"
    if "Makefile" in names:
        try:
            m = _MAKE_TARGET.search((root / "Makefile").read_text(encoding="utf-8", errors="replace"))
        except OSError:
            m = None
        if m:
            return f"make {m.group(1)}"
    return None


def find_check(root: Path, task: str, instructions: str, files: list[str], flag: str | None = None) -> Check | None:
    """The run's check, first found wins: ``--check``, the task, AGENTS.md, the workspace."""
    if flag and flag.strip():
        return Check(flag.strip(), "flag")
    for text, source in ((task, "task"), (instructions, "instructions")):
        cmd = named_check(text)
        if cmd:
            return Check(cmd, source)
    cmd = workspace_check(root, files)
    return Check(cmd, "workspace") if cmd else None


def _same(a: str | None, b: str) -> bool:
    return a is not None and " ".join(a.split()) == " ".join(b.split())


def tail(output: str, n: int = OUTPUT_TAIL) -> str:
    return output if len(output) <= n else "..." + output[-n:]


CHECK_TIMEOUT_S = 600  # a check not yet timed: a project's whole suite may be slow
# once the check has finished, a run this many times its fastest is taken for a hang (a sampled try's
# endless loop would hold each of its checks for the whole 600 s), with a floor for a machine's jitter
HANG_FACTOR = 20
HANG_FLOOR_S = 60


@dataclass
class CheckState:
    """What the turn knows about its check: ``passed`` is True/False for the last run after the
    last edit, None when it has not run since (or ever)."""

    check: Check
    passed: bool | None = None
    exit_code: int | None = None
    output: str = ""
    runs: int = 0
    ran_by_tau: int = 0
    skipped: str = ""  # why tau could not run it (e.g. shell commands not allowed)
    pushbacks: int = 0  # final answers sent back while it failed (a limited number for some checks)
    fastest_s: float | None = None  # the fastest run of it that finished, as tau timed it

    def timeout_s(self) -> int:
        """Seconds tau lets its next run of the check take."""
        if self.fastest_s is None:
            return CHECK_TIMEOUT_S
        return int(min(CHECK_TIMEOUT_S, max(HANG_FLOOR_S, HANG_FACTOR * self.fastest_s)))

    def finished_in(self, seconds: float) -> None:
        self.fastest_s = seconds if self.fastest_s is None else min(self.fastest_s, seconds)

    def edited(self) -> None:
        self.passed = None

    def ran(self, command: str | None, exit_code: int | None, output: str, by_tau: bool = False) -> bool:
        """Record a shell command; True when it was the check."""
        if not _same(command, self.check.command):
            return False
        self.runs += 1
        self.ran_by_tau += int(by_tau)
        self.exit_code, self.output = exit_code, output
        self.passed = exit_code == 0
        return True

    def report(self) -> dict:
        """The check's part of the final event."""
        return {
            "command": self.check.command,
            "source": self.check.source,
            "ran": self.runs > 0,
            "passed": self.passed,
            "exit_code": self.exit_code,
            "output_tail": tail(self.output) if self.runs else "",
            **({"skipped": self.skipped} if self.skipped else {}),
        }
