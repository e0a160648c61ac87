"""The systems compared, each run on one problem repository against one ``tau serve``:

- ``raw``: the model alone, one greedy reply with the whole function (no tools, no retry);
- ``aider``: aider ``--edit-format whole`` pointed at the server (its own virtualenv);
- ``edit``: ``tau edit solution.py "..." --yes`` with the tests hidden;
- ``run``: ``tau run "..." --mode full-auto`` with the tests visible;
- ``run-hidden``: the same with the tests hidden (no test command: the docstring examples judge it).

Each returns a ``Run``: the exit code the system gave and its wall time.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from app.agent.editformat import merge_definitions
from app.evals.problems import SOLUTION, TEST_FILE, Problem

SYSTEMS = ("raw", "aider", "edit", "run", "run-hidden")
_PY_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)
RAW_SYSTEM = "You are an expert Python programmer."


@dataclass(frozen=True)
class Server:
    base: str  # http://127.0.0.1:PORT/v1
    model: str  # the served model id
    env: dict[str, str] = field(default_factory=dict)  # what tau's commands need to attach to it


@dataclass(frozen=True)
class Run:
    exit_code: int | None  # None: no exit code to judge (the raw model)
    wall_s: float
    note: str = ""


def instruction(p: Problem) -> str:
    return (f"Implement the function {p.entry_point} in {SOLUTION} as its docstring describes "
            "(replace the `raise NotImplementedError` with a real implementation).")


def run_task(p: Problem) -> str:
    return instruction(p) + f" The tests in {TEST_FILE} must pass: run them with `python -m pytest -q`."


def _tau(args: list[str], root: Path, server: Server, timeout: float) -> Run:
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "app.cli.main", *args]
    try:
        p = subprocess.run(cmd, cwd=root, env=server.env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Run(124, time.perf_counter() - t0, "timed out")
    (root.parent / f"{root.name}.log").write_text(p.stdout + "\n--- stderr ---\n" + p.stderr, encoding="utf-8")
    return Run(p.returncode, time.perf_counter() - t0, _final_note(p.stdout))


def _final_note(stdout: str) -> str:
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if d.get("type") == "final":
                return f"{d.get('status')}: {d.get('reason') or ''}".strip()
            return "applied" if d.get("applied") else "not applied"
    return ""


def run_edit(p: Problem, root: Path, server: Server, timeout: float) -> Run:
    return _tau(["edit", SOLUTION, instruction(p), "--yes", "--json"], root, server, timeout)


def run_agent(p: Problem, root: Path, server: Server, timeout: float, max_steps: int = 12) -> Run:
    return _tau(["run", run_task(p), "--json", "--mode", "full-auto", "--max-steps", str(max_steps)], root, server, timeout)


def run_hidden(p: Problem, root: Path, server: Server, timeout: float, max_steps: int = 12) -> Run:
    return _tau(["run", instruction(p), "--json", "--mode", "full-auto", "--max-steps", str(max_steps)], root, server, timeout)


def run_aider(p: Problem, root: Path, server: Server, timeout: float, aider: str) -> Run:
    env = {**server.env, "OPENAI_API_BASE": server.base, "OPENAI_API_KEY": "none"}
    cmd = [aider, "--model", f"openai/{server.model}", "--edit-format", "whole", "--yes-always", "--no-auto-commits",
           "--no-check-update", "--no-show-model-warnings", "--no-analytics", "--no-pretty", "--no-stream", "--no-fancy-input",
           "--message", instruction(p), SOLUTION]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Run(124, time.perf_counter() - t0, "timed out")
    (root.parent / f"{root.name}.log").write_text(r.stdout + "\n--- stderr ---\n" + r.stderr, encoding="utf-8")
    return Run(r.returncode, time.perf_counter() - t0)


def raw_prompt(p: Problem) -> str:
    return ("Complete this Python function. Reply with the whole function (signature and body) in one "
            f"```python block.\n\n```python\n{p.stub()}```")


def run_raw(p: Problem, root: Path, server: Server, timeout: float) -> Run:
    """One greedy chat completion; its code block (the function, or the whole file) becomes solution.py."""
    body = json.dumps({"model": server.model, "temperature": 0, "max_tokens": 1024, "messages": [
        {"role": "system", "content": RAW_SYSTEM}, {"role": "user", "content": raw_prompt(p)}]}).encode()
    req = urllib.request.Request(server.base + "/chat/completions", body, {"Content-Type": "application/json"})
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text = json.loads(resp.read())["choices"][0]["message"]["content"] or ""
    except (OSError, ValueError, KeyError, IndexError) as e:
        return Run(None, time.perf_counter() - t0, f"request failed: {e}")
    wall = time.perf_counter() - t0
    (root.parent / f"{root.name}.log").write_text(text, encoding="utf-8")
    blocks = _PY_BLOCK.findall(text)
    code = next((b for b in blocks if f"def {p.entry_point}" in b), blocks[0] if blocks else text)
    stub = (root / SOLUTION).read_text(encoding="utf-8")
    (root / SOLUTION).write_text(merge_definitions(stub, code) or code, encoding="utf-8")
    return Run(None, wall)


def tau_env(runtime_dir: Path, state_dir: Path) -> dict[str, str]:
    """The environment of tau's commands: one runtime dir (they find the server there), greedy."""
    repo = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "TAU_RUNTIME_DIR": str(runtime_dir), "TAU_STATE_DIR": str(state_dir),
            "TAU_TEMPERATURE": "0", "PYTHONPATH": repo + (os.pathsep + path if path else "")}
