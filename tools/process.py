"""Run a shell command in its own process group, with a timeout, cancellation and a
bounded head+tail output buffer. When it returns, times out or is cancelled the whole group
is killed, so background jobs do not outlive it (``tools.sandbox`` confines the rest)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tools.cancel import Cancellable, is_cancelled
from tools.capping import DEFAULT_CAP, HeadTailBuffer
from tools.sandbox import filter_env

POLL_S = 0.05
TERM_GRACE_S = 0.5
DRAIN_GRACE_S = 1.0


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int | None  # None when killed before it finished; negative: killed by a signal
    output: str  # stdout and stderr interleaved, capped
    timed_out: bool = False
    cancelled: bool = False
    omitted: int = 0  # bytes dropped from the middle of the output
    duration_s: float = 0.0
    stray_killed: bool = False  # background children outlived the command and were stopped


def shell_env() -> dict[str, str]:
    """tau's environment without its secrets (``tools.sandbox.filter_env``), pagers off."""
    return filter_env(os.environ)


def run_process(
    command: str,
    cwd: Path,
    timeout: float = 120.0,
    cancel: Cancellable | None = None,
    limit: int = DEFAULT_CAP,
    *,
    argv: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> ProcessResult:
    """Run ``command`` with bash in ``cwd``; ``argv`` (a sandbox wrapping it) runs instead when given."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        list(argv) if argv is not None else command,
        shell=argv is None,
        executable=None if argv is not None else shutil.which("bash") or "/bin/sh",
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=dict(env) if env is not None else shell_env(),
    )
    buf = HeadTailBuffer(limit)
    assert proc.stdout is not None
    reader = threading.Thread(target=_pump, args=(proc.stdout, buf), daemon=True)
    reader.start()
    deadline = t0 + timeout
    timed_out = cancelled = stray = False
    while True:
        try:
            proc.wait(timeout=POLL_S)
            break
        except subprocess.TimeoutExpired:
            pass
        if is_cancelled(cancel):
            cancelled = True
        elif time.monotonic() >= deadline:
            timed_out = True
        if cancelled or timed_out:
            kill_group(proc)
            break
    reader.join(DRAIN_GRACE_S)
    if reader.is_alive() or _group_alive(proc.pid):  # background children outlived the command
        stray = True
    kill_group(proc)  # always: a job left in the group would outlive the turn
    reader.join(DRAIN_GRACE_S)
    return ProcessResult(
        exit_code=proc.returncode,
        output=buf.text(),
        timed_out=timed_out,
        cancelled=cancelled,
        omitted=buf.omitted,
        duration_s=time.monotonic() - t0,
        stray_killed=stray,
    )


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left of it after a short grace."""
    pgid = proc.pid  # start_new_session: the leader's pid is the group id
    _signal_group(pgid, signal.SIGTERM)
    end = time.monotonic() + TERM_GRACE_S
    while time.monotonic() < end and _group_alive(pgid):
        try:
            proc.wait(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(pgid, signal.SIGKILL)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _pump(stream: IO[bytes], buf: HeadTailBuffer) -> None:
    try:
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                break
            buf.write(chunk)
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass
