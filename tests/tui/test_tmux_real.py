"""The real ``tau`` in tmux on the default models: send a request, read tok/s and tau off the screen.

Needs the default model pack and the local engine (slow; marked real_model) and tmux.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.real_model

LOAD_TIMEOUT = 600.0
TURN_TIMEOUT = 300.0
SPEED = r"decode (\d+(?:\.\d+)?) tok/s\s+wall (\d+(?:\.\d+)?) tok/s\s+τ (\d+(?:\.\d+)?)"


def tmux(*args: str) -> str:
    r = subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise RuntimeError(f"tmux {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def screen(name: str) -> str:
    return tmux("capture-pane", "-p", "-t", name)


def wait_screen(
    name: str, pattern: str, timeout: float, log: Path, accept: Callable[[re.Match[str]], bool] = lambda m: True
) -> re.Match[str]:
    end = time.monotonic() + timeout
    text = ""
    while time.monotonic() < end:
        text = screen(name)
        if "Run this command?" in text or "Apply this edit?" in text:
            tmux("send-keys", "-t", name, "n")  # keep the temporary repo as it is
        m = re.search(pattern, text)
        if m and accept(m):
            return m
        time.sleep(0.25)
    log_tail = log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"
    raise AssertionError(f"{pattern!r} not on screen after {timeout:.0f}s:\n{text}\n--- tui.log ---\n{log_tail}")


@pytest.fixture
def tmux_available() -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (the CI image needs it: apt-get install tmux)")


def test_real_tau_in_tmux_shows_speed_and_tau(tmux_available: None, tmp_path: Path) -> None:
    repo = tmp_path / "demo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    state = tmp_path / "state"
    env_vars = {
        "TAU_CONFIG_DIR": str(tmp_path / "config"),
        "TAU_STATE_DIR": str(state),
        "PYTHONPATH": str(ROOT),
        "TERM": "xterm-256color",
    }
    env = " ".join(f"{k}={v!s}" for k, v in env_vars.items())
    cmd = f"env {env} {sys.executable} -m app.cli.main --mode auto-edit"
    name = f"tau-real-{os.getpid()}"
    tmux("new-session", "-d", "-s", name, "-x", "160", "-y", "48", "-c", str(repo), cmd)
    try:
        tmux("set-option", "-t", name, "remain-on-exit", "on")
        tmux("resize-window", "-t", name, "-x", "160", "-y", "48")
        log = state / "tui.log"
        wait_screen(name, r"○ ready", LOAD_TIMEOUT, log)
        assert re.search(r"model \S+", screen(name)), screen(name)
        tmux("send-keys", "-t", name, "-l", "Write a Python function fib(n) that returns the n-th Fibonacci number.")
        tmux("send-keys", "-t", name, "Enter")
        wait_screen(name, r"● generating", 60, log)
        # a running snapshot with decoded tokens: tok/s and tau read off the status bar
        speed = wait_screen(name, SPEED, TURN_TIMEOUT, log, accept=lambda m: float(m.group(1)) > 0 and float(m.group(2)) > 0)
        decode, wall, tau = (float(x) for x in speed.groups())
        print(f"\nstatus bar: decode {decode} tok/s, wall {wall} tok/s, tau {tau}")
        assert decode > 0 and wall > 0
        assert 0 < tau <= 32  # tokens per verify pass (a running snapshot may lag by one pass)
        # let the turn finish (or cancel it if the machine is slow), then quit with ctrl+c twice
        finished = True
        try:
            wait_screen(name, r"○ ready", TURN_TIMEOUT, log)
        except AssertionError:
            finished = False
            tmux("send-keys", "-t", name, "C-c")
            wait_screen(name, r"○ ready", 120, log)
        final = re.search(SPEED, screen(name))
        assert final is not None and float(final.group(1)) > 0, screen(name)
        if finished:  # the final stats of a whole generation: at least one token per verify pass
            assert float(final.group(3)) >= 1.0, screen(name)
        tmux("send-keys", "-t", name, "C-c")
        tmux("send-keys", "-t", name, "C-c")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
