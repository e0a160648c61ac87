"""Finding 9: full-auto had no confinement (`cat .env`, `env`, writes outside, setsid jobs).

Each check runs run_shell in full-auto in a temporary git repository, once with the real
bubblewrap (skipped with the reason when it cannot run here) and once with bwrap made absent,
where the test states what tau does and does not promise (the README's safety table)."""

from __future__ import annotations

import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import tools.sandbox_host as host
from tools.base import ToolContext, ToolResult
from tools.permissions import Policy
from tools.permissions_types import deny_all
from tools.sandbox import ShellOptions
from tools.shell import RunShell

BWRAP = host.find_bwrap()
needs_bwrap = pytest.mark.skipif(
    BWRAP is None, reason="bwrap (Debian package bubblewrap) is not installed or cannot create namespaces here"
)
SECRET = "sk-live-0123456789abcdef"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".env").write_text(f"API_KEY={SECRET}\n")
    (ws / "app.py").write_text("print('hi')\n")
    return ws.resolve()


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host, "find_bwrap", lambda: None)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A path outside the workspace and outside /tmp (the sandbox's /tmp is private)."""
    path = Path("/var/tmp") / f"tau-finding-09-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


def shell(root: Path, command: str, network: bool | None = None) -> ToolResult:
    ctx = ToolContext(root=root, policy=Policy("full-auto", deny_all),
                      extra={"shell": ShellOptions(mode="full-auto", network=network)})
    return RunShell().run({"command": command, "timeout": 20}, ctx)


def running(marker: str) -> list[int]:
    """Host pids whose command line holds ``marker`` (zombies do not count)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state not in ("Z", "X"):
            pids.append(int(proc.name))
    return pids


def settle(marker: str, wait_s: float = 3.0) -> list[int]:
    end = time.monotonic() + wait_s
    while (left := running(marker)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


@pytest.fixture
def listener() -> Iterator[int]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    yield s.getsockname()[1]
    s.close()


CONNECT = "exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
# a job in its own session that the command waits for until it runs (so it is not killed before it starts)
SETSID_JOB = ("setsid sh -c 'echo $$ > job.pid; exec sleep {marker}' > /dev/null 2>&1 < /dev/null & "
              "while [ ! -s job.pid ]; do sleep 0.05; done; echo started")


# -- with bubblewrap ---------------------------------------------------------------------

@needs_bwrap
def test_cannot_write_outside_the_workspace(root: Path, outside: Path) -> None:
    r = shell(root, f"echo x > {outside}; echo y > inside.txt; echo z > /tmp/private.txt; cat /tmp/private.txt")
    assert not outside.exists()
    assert "Read-only file system" in r.output
    assert (root / "inside.txt").read_text() == "y\n"  # the workspace stays writable
    assert "z" in r.output.splitlines()  # so does a private /tmp
    assert not Path("/tmp/private.txt").exists()


@needs_bwrap
def test_cannot_plant_git_hooks_run_later_outside(root: Path) -> None:
    r = shell(root, "echo 'touch /tmp/pwned' > .git/hooks/pre-commit")
    assert not r.ok and not (root / ".git" / "hooks" / "pre-commit").exists()
    assert shell(root, "git status --short").ok  # git still reads the repository


@needs_bwrap
def test_cannot_read_a_masked_secret_file(root: Path) -> None:
    r = shell(root, "cat .env; grep -r API_KEY . ; cp .env copy.txt; cat copy.txt")
    assert SECRET not in r.output
    assert not (root / "copy.txt").exists() or SECRET not in (root / "copy.txt").read_text()
    assert (root / ".env").read_text() == f"API_KEY={SECRET}\n"  # the file itself is untouched
    assert shell(root, "echo API_KEY=stolen > .env").ok is False
    assert (root / ".env").read_text() == f"API_KEY={SECRET}\n"


@needs_bwrap
def test_does_not_see_secret_variables(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOO_TOKEN", "tok-9f8e7d")
    monkeypatch.setenv("FOO_PLAIN", "visible")
    r = shell(root, 'echo "[$FOO_TOKEN]"; env; cat /proc/self/environ | tr "\\0" "\\n"')
    assert "tok-9f8e7d" not in r.output and "[]" in r.output
    assert "FOO_PLAIN=visible" in r.output


@needs_bwrap
def test_network_off_unless_allowed(root: Path, listener: int) -> None:
    off = shell(root, CONNECT.format(port=listener))
    assert not off.ok and "connected" not in off.output.splitlines()
    assert "no network" in off.output  # the model is told why
    on = shell(root, CONNECT.format(port=listener), network=True)
    assert on.ok and "connected" in on.output.splitlines()


@needs_bwrap
def test_leaves_no_process_behind(root: Path) -> None:
    marker = f"{int(time.time()) % 1000 + 100}.{uuid.uuid4().int % 10**6}"  # a sleep nothing else runs
    r = shell(root, f"nohup sleep {marker} >/dev/null 2>&1 & " + SETSID_JOB.format(marker=marker))
    assert r.ok and "started" in r.output.splitlines()
    assert settle(f"sleep {marker}") == []


@needs_bwrap
def test_timeout_still_kills_and_caps_output(root: Path) -> None:
    marker = f"{uuid.uuid4().int % 10**6}.5"
    ctx = ToolContext(root=root, policy=Policy("full-auto", deny_all))
    t0 = time.monotonic()
    r = RunShell().run({"command": f"setsid sleep {marker} & sleep {marker}", "timeout": 1}, ctx)
    assert time.monotonic() - t0 < 10 and "[timed out after 1s" in r.output
    assert settle(f"sleep {marker}") == []
    big = RunShell().run({"command": "seq 1 400000"}, ctx)
    assert "bytes omitted" in big.output and len(big.output) < 31_000


# -- without bubblewrap: what tau does and does not promise ---------------------------------

def test_without_bwrap_env_is_still_filtered(root: Path, no_bwrap: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOO_TOKEN", "tok-9f8e7d")
    r = shell(root, 'echo "[$FOO_TOKEN]"; env')
    assert "tok-9f8e7d" not in r.output and "[]" in r.output


def test_without_bwrap_the_process_group_is_killed(root: Path, no_bwrap: None) -> None:
    marker = f"{uuid.uuid4().int % 10**6}.25"
    r = shell(root, f"nohup sleep {marker} > /dev/null 2>&1 & echo started")
    assert r.ok and "started" in r.output
    assert settle(f"sleep {marker}") == []


def test_without_bwrap_setsid_jobs_and_writes_outside_are_not_prevented(
    root: Path, no_bwrap: None, outside: Path, listener: int
) -> None:
    """The README's honest claim: without bwrap the shell is unconfined beyond env and group."""
    marker = f"{uuid.uuid4().int % 10**6}.75"
    r = shell(root, f"echo x > {outside}; cat .env; " + SETSID_JOB.format(marker=marker))
    try:
        assert outside.read_text() == "x\n"
        assert SECRET in r.output
        assert running(f"sleep {marker}"), "a setsid job escapes the process group without bwrap"
    finally:
        for pid in running(f"sleep {marker}"):
            subprocess.run(["kill", "-9", str(pid)], check=False)
    assert "connected" in shell(root, CONNECT.format(port=listener)).output.splitlines()  # no network namespace


def test_without_bwrap_tau_says_the_shell_is_unconfined(no_bwrap: None) -> None:
    notice = host.current_confinement(ShellOptions(mode="full-auto")).notice
    assert notice is not None
    assert notice.startswith("the shell is unconfined") and "bubblewrap" in notice
    assert "write outside the workspace" in notice and "read secret files" in notice


def _agent_notices(root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[object]:
    from app.agent import Agent
    from app.config import Config
    from app.events import Notice
    from engine.scripted import ScriptedEngine

    monkeypatch.setenv("TAU_STATE_DIR", str(tmp_path / "state"))
    events: list[object] = []
    agent = Agent(ScriptedEngine(["nothing to do"]), root, config=Config(mode="full-auto"), approver=deny_all,
                  on_event=events.append)
    agent.run_turn("hello")
    agent.run_turn("again")
    return [e.message for e in events if isinstance(e, Notice)]


def test_without_bwrap_the_agent_says_so_once(
    root: Path, no_bwrap: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    unconfined = [m for m in _agent_notices(root, monkeypatch, tmp_path) if "unconfined" in str(m)]
    assert len(unconfined) == 1 and str(unconfined[0]).startswith("the shell is unconfined")


@needs_bwrap
def test_with_bwrap_the_agent_gives_no_unconfined_notice(
    root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert not [m for m in _agent_notices(root, monkeypatch, tmp_path) if "unconfined" in str(m)]


@pytest.mark.parametrize("allow", ["", "FOO_TOKEN"])
def test_the_agent_hands_the_config_s_shell_settings_to_run_shell(
    root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, allow: str
) -> None:
    import json

    from app.agent import Agent
    from app.config import Config
    from app.events import ToolResultEvent
    from engine.scripted import ScriptedEngine

    monkeypatch.setenv("TAU_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("FOO_TOKEN", "tok-9f8e7d")
    call = "<tool_call>\n" + json.dumps({"name": "run_shell", "arguments": {"command": 'echo "[$FOO_TOKEN]"'}})
    events: list[object] = []
    agent = Agent(ScriptedEngine([call + "\n</tool_call>", "done"]), root, approver=deny_all,
                  config=Config(mode="full-auto", shell_env_allow=allow), on_event=events.append)
    agent.run_turn("show the token")
    out = next(e.output for e in events if isinstance(e, ToolResultEvent))
    assert ("[tok-9f8e7d]" in out) == (allow == "FOO_TOKEN"), out


def test_shell_settings_from_a_shell_table_or_flat_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.agent.shell_setup import shell_options
    from app.config import ConfigError, load_config

    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text('[shell]\nnetwork = true\nenv_allow = "GITHUB_TOKEN, NPM_*"\nsandbox = false\n')
    opts = shell_options(load_config(cfg_file), "full-auto")
    assert opts == ShellOptions(mode="full-auto", network=True, sandbox=False, env_allow=("GITHUB_TOKEN", "NPM_*"))
    cfg_file.write_text("shell_network = false\n")
    assert shell_options(load_config(cfg_file), "ask").network is False
    monkeypatch.setenv("TAU_SHELL_NETWORK", "1")
    assert load_config(cfg_file).shell_network is True
    cfg_file.write_text('[shell]\nnetwork = "yes"\n')
    with pytest.raises(ConfigError, match="shell_network must be true or false"):
        load_config(cfg_file)
