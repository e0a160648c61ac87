from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

from engine.types import CancelToken
from tools.base import ToolContext
from tools.process import run_process
from tools.sandbox import ShellOptions
from tools.sandbox_host import current_confinement
from tools.shell import RunShell


def _gone(pid: int, wait_s: float = 3.0) -> bool:
    """True once ``pid`` no longer runs (a zombie waiting for its reaper counts as gone)."""
    end = time.monotonic() + wait_s
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.05)


def _marker() -> str:
    """A sleep duration no other process uses: found by command line, since a sandboxed
    command's pids are those of its own pid namespace."""
    return f"{uuid.uuid4().int % 10**6 + 1000}.5"


def _running(marker: str, wait_s: float = 3.0) -> bool:
    end = time.monotonic() + wait_s
    while True:
        alive = False
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and f"sleep {marker}".encode() in (proc / "cmdline").read_bytes().replace(
                    b"\0", b" "
                ):
                    alive = alive or not _gone(int(proc.name), 0)
            except OSError:
                continue
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.05)


def test_exit_code_and_interleaved_output(root: Path, ctx: ToolContext) -> None:
    result = RunShell().run({"command": "echo out; echo err >&2; exit 3"}, ctx)
    assert not result.ok
    assert result.exit_code == 3
    assert result.command == "echo out; echo err >&2; exit 3"
    where = current_confinement(ShellOptions()).describe()  # after a failure: how it was confined
    assert result.output == "$ echo out; echo err >&2; exit 3\nout\nerr\n[exit code 3]" + (f"\n{where}" if where else "")
    ok = RunShell().run({"command": "pwd"}, ctx)
    assert ok.ok and ok.exit_code == 0 and ok.output.splitlines()[1] == str(root)


def test_timeout_kills_the_whole_process_tree(ctx: ToolContext) -> None:
    m = _marker()
    t0 = time.monotonic()
    result = RunShell().run({"command": f"sh -c 'sleep {m} & echo $!; sleep {m}'", "timeout": 1}, ctx)
    assert time.monotonic() - t0 < 10
    assert not result.ok
    assert "[timed out after 1s; the command and its child processes were killed]" in result.output
    assert not _running(m), "the grandchild survived the timeout"


def test_cancel_kills_the_whole_process_tree(root: Path, make_ctx) -> None:
    token = CancelToken()
    ctx = make_ctx(root, cancel=token)
    timer = threading.Timer(0.5, token.cancel)
    timer.start()
    m = _marker()
    t0 = time.monotonic()
    result = RunShell().run({"command": f"sleep {m} & echo $!; wait"}, ctx)
    timer.join()
    assert time.monotonic() - t0 < 10
    assert not result.ok and "cancelled by the user" in result.output
    assert not _running(m)


def test_output_is_capped_keeping_head_and_tail(root: Path) -> None:
    result = run_process("seq 1 300000", root, limit=10_000)
    assert result.exit_code == 0
    assert result.output.startswith("1\n2\n3\n")
    assert result.output.rstrip().endswith("299999\n300000")
    assert result.omitted > 1_000_000
    assert f"[... {result.omitted} bytes omitted ...]" in result.output
    assert len(result.output) < 10_100


def test_background_child_holding_the_output_does_not_hang(root: Path) -> None:
    t0 = time.monotonic()
    result = run_process("sleep 100 & echo $!; echo started", root, timeout=30)
    assert time.monotonic() - t0 < 10
    assert result.exit_code == 0 and result.stray_killed
    assert "started" in result.output
    assert _gone(int(result.output.splitlines()[0]))


def test_background_job_not_holding_the_output_is_killed_when_the_command_returns(root: Path) -> None:
    m = _marker()
    result = run_process(f"nohup sleep {m} > /dev/null 2>&1 & echo started", root, timeout=30)
    assert result.exit_code == 0 and result.stray_killed
    assert not _running(m)


def test_no_stdin_and_timeout_argument_is_clamped(ctx: ToolContext) -> None:
    result = RunShell().run({"command": "cat", "timeout": 0}, ctx)  # stdin is /dev/null: no hang
    assert result.ok and result.exit_code == 0
    empty = RunShell().run({"command": "   "}, ctx)
    assert not empty.ok and "empty" in empty.output


def test_environment_disables_pagers(ctx: ToolContext) -> None:
    assert RunShell().run({"command": "echo $GIT_PAGER"}, ctx).output.splitlines()[1] == "cat"


def test_already_cancelled_command_does_not_start(root: Path, make_ctx) -> None:
    token = CancelToken()
    token.cancel()
    result = RunShell().run({"command": "touch started.txt"}, make_ctx(root, cancel=token))
    assert not result.ok and "cancelled" in result.output
    assert not (root / "started.txt").exists()
