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
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.evals.problems import EvalProblem

SYSTEMS = ("raw", "aider", "edit", "run", "run-hidden")


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


def instruction(p: EvalProblem) -> str:
    return (f"Implement the function {p.entry_point} in {p.solution} as its {p.described_by} describes "
            f"(replace the {p.placeholder} with a real implementation).")


def run_task(p: EvalProblem) -> str:
    return instruction(p) + f" The tests in {p.tests_name} must pass: run them with `{p.check_text}`."


def _tau(args: list[str], root: Path, server: Server, timeout: float) -> Run:
    return logged_run([sys.executable, "-m", "app.cli.main", *args], root, server.env, timeout, _final_note)


def logged_run(cmd: list[str], root: Path, env: dict[str, str], timeout: float,
               note: Callable[[str], str] = lambda _out: "") -> Run:
    """Run ``cmd`` in ``root`` in its own process group and write its output to ``root``'s log.

    On a timeout the whole group is killed (a check the system started must not run on into the
    next problem) and the output so far is still written, so a run cut short leaves its trace.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a process outside the group holds the pipes open
            proc.kill()
            out, err = "", ""
        code = None
    wall = time.perf_counter() - t0
    (root.parent / f"{root.name}.log").write_text(out + "\n--- stderr ---\n" + err, encoding="utf-8")
    if code is None:
        last = _last_event(out)
        return Run(124, wall, f"timed out after {timeout:.0f} s" + (f" (last event: {last})" if last else ""))
    return Run(code, wall, note(out))


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _last_json(stdout: str) -> dict | None:
    """The last JSON object a ``--json`` run printed on a line of its own."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if isinstance(d, dict):
                return d
    return None


def _last_event(stdout: str) -> str:
    """The type of the last JSON event a ``--json`` run printed, or ''."""
    d = _last_json(stdout)
    return str(d.get("type") or "") if d else ""


def _final_note(stdout: str) -> str:
    d = _last_json(stdout)
    if d is None:
        return ""
    if d.get("type") == "final":
        return f"{d.get('status')}: {d.get('reason') or ''}".strip()
    return "applied" if d.get("applied") else "not applied"


def run_edit(p: EvalProblem, root: Path, server: Server, timeout: float) -> Run:
    return _tau(["edit", p.solution, instruction(p), "--yes", "--json"], root, server, timeout)


def run_agent(p: EvalProblem, root: Path, server: Server, timeout: float, max_steps: int = 12) -> Run:
    return _tau(["run", run_task(p), "--json", "--mode", "full-auto", "--max-steps", str(max_steps)], root, server, timeout)


def run_hidden(p: EvalProblem, root: Path, server: Server, timeout: float, max_steps: int = 12) -> Run:
    return _tau(["run", instruction(p), "--json", "--mode", "full-auto", "--max-steps", str(max_steps)], root, server, timeout)


def run_aider(p: EvalProblem, root: Path, server: Server, timeout: float, aider: str) -> Run:
    env = {**server.env, "OPENAI_API_BASE": server.base, "OPENAI_API_KEY": "none"}
    cmd = [aider, "--model", f"openai/{server.model}", "--edit-format", "whole", "--yes-always", "--no-auto-commits",
           "--no-check-update", "--no-show-model-warnings", "--no-analytics", "--no-pretty", "--no-stream", "--no-fancy-input",
           "--message", instruction(p), p.solution]
    return logged_run(cmd, root, env, timeout)


def raw_prompt(p: EvalProblem) -> str:
    return (f"Complete this {p.language} function. Reply with the whole function (signature and body) in one "
            f"```{p.fence} block.\n\n```{p.fence}\n{p.stub()}```")


def run_raw(p: EvalProblem, root: Path, server: Server, timeout: float) -> Run:
    """One greedy chat completion; its code block (the function, or the whole file) becomes the solution."""
    body = json.dumps({"model": server.model, "temperature": 0, "max_tokens": 1024, "messages": [
        {"role": "system", "content": f"You are an expert {p.language} programmer."},
        {"role": "user", "content": raw_prompt(p)}]}).encode()
    req = urllib.request.Request(server.base + "/chat/completions", body, {"Content-Type": "application/json"})
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text = json.loads(resp.read())["choices"][0]["message"]["content"] or ""
    except (OSError, ValueError, KeyError, IndexError) as e:
        return Run(None, time.perf_counter() - t0, f"request failed: {e}")
    wall = time.perf_counter() - t0
    (root.parent / f"{root.name}.log").write_text(text, encoding="utf-8")
    (root / p.solution).write_text(p.solution_from_reply(text), encoding="utf-8")
    return Run(None, wall)


def tau_env(runtime_dir: Path, state_dir: Path) -> dict[str, str]:
    """The environment of tau's commands: one runtime dir (they find the server there), greedy."""
    repo = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "TAU_RUNTIME_DIR": str(runtime_dir), "TAU_STATE_DIR": str(state_dir),
            "TAU_TEMPERATURE": "0", "PYTHONPATH": repo + (os.pathsep + path if path else "")}
