"""The shell sandbox's pure parts: the per-mode decision, the environment filter, the bwrap
command line, the paths it hides, and the README table rendered from the decision."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.permissions_types import MODES
from tools.sandbox import (
    Mounts,
    ShellOptions,
    bwrap_argv,
    confinement,
    filter_env,
    safety_table,
)
from tools.sandbox_host import hidden_paths

README = Path(__file__).resolve().parents[2] / "README.md"


def test_confinement_per_mode_with_bwrap() -> None:
    ask, edit, full = (confinement(m, bwrap=True) for m in MODES)
    assert ask.asks_first and edit.asks_first and not full.asks_first
    assert ask.network and not edit.network and not full.network  # off where commands are not each reviewed
    for c in (ask, edit, full):
        assert c.bwrap and c.writes_confined and c.secrets_masked and c.env_filtered and c.all_killed
        assert c.notice is None
    assert confinement("full-auto", bwrap=True, options=ShellOptions(network=True)).network
    assert not confinement("ask", bwrap=True, options=ShellOptions(network=False)).network


def test_without_bwrap_only_the_environment_and_the_group_are_confined() -> None:
    for mode in MODES:
        c = confinement(mode, bwrap=False, options=ShellOptions(network=False))
        assert not (c.bwrap or c.writes_confined or c.secrets_masked or c.all_killed)
        assert c.env_filtered and c.group_killed
        assert c.network  # no namespace: asking for no network cannot be honoured
        assert c.notice is not None and "unconfined" in c.notice and "bubblewrap" in c.notice
    off = confinement("full-auto", bwrap=True, options=ShellOptions(sandbox=False))
    assert not off.bwrap and off.notice is not None


def test_unknown_mode_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown permission mode 'yolo'"):
        confinement("yolo", bwrap=True)


def test_environment_filter_drops_secrets_and_keeps_the_rest() -> None:
    env = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "FOO_TOKEN": "t",
        "OPENAI_API_KEY": "k",
        "db_password": "p",
        "MY_SECRET": "s",
        "AWS_PROFILE": "prod",
        "SSH_AUTH_SOCK": "/tmp/agent",
        "GITHUB_TOKEN": "g",
        "KEYBOARD": "us",
        "PAGER": "less",
    }
    kept = filter_env(env)
    assert set(kept) == {"PATH", "HOME", "KEYBOARD", "PAGER", "GIT_PAGER", "GIT_TERMINAL_PROMPT", "NO_COLOR"}
    assert kept["PAGER"] == "cat"
    allowed = filter_env(env, ("github_token", "AWS_*"))
    assert allowed["GITHUB_TOKEN"] == "g" and allowed["AWS_PROFILE"] == "prod" and "FOO_TOKEN" not in allowed


def test_bwrap_argv_order_and_network() -> None:
    mounts = Mounts(files=("/w/.env",), dirs=("/w/secrets.json",), read_only=("/w/.git",))
    argv = bwrap_argv("/usr/bin/bwrap", "/w", "echo hi", shell="/bin/bash", network=False, mounts=mounts)
    assert argv[0] == "/usr/bin/bwrap" and argv[-3:] == ["/bin/bash", "-c", "echo hi"]
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in argv
    joined = " ".join(argv)
    order = ["--ro-bind / /", "--tmpfs /tmp", "--bind /w /w", "--ro-bind /w/.git /w/.git",
             "--tmpfs /w/secrets.json", "--ro-bind /dev/null /w/.env", "--chdir /w"]
    positions = [joined.index(part) for part in order]
    assert positions == sorted(positions), "later mounts must cover earlier ones"
    online = bwrap_argv("bwrap", "/w", "x", shell="sh", network=True)
    assert "--unshare-net" not in online


def test_hidden_paths_masks_secrets_keeps_git_read_only(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / "sub").mkdir()
    (root / ".env").write_text("K=1\n")
    (root / ".env.example").write_text("K=\n")
    (root / "sub" / "id_rsa").write_text("key\n")
    (root / "secrets.json").mkdir()  # a directory with a secret's name
    (root / "venv" / ".env").mkdir(parents=True)  # pruned: a virtualenv is walked for nothing
    (root / "venv" / "pyvenv.cfg").write_text("")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "test.pem").write_text("x")
    outside = tmp_path / "elsewhere.env"
    outside.write_text("S=1\n")
    (root / "notes.txt").symlink_to(outside)  # a link to a secret-named file: its target is masked
    (root / "loop").symlink_to(root / "loop")
    (root / "up.env").symlink_to(tmp_path)  # a secret-named link over the workspace's parent: not masked
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("machine x\n")
    m = hidden_paths(root, str(home))
    assert set(m.files) == {str(root / ".env"), str(root / "sub" / "id_rsa"), str(outside), str(home / ".netrc")}
    assert set(m.dirs) == {str(root / "secrets.json"), str(home / ".ssh")}
    assert m.read_only == (str(root / ".git"),)


def test_readme_safety_table_is_the_code_s() -> None:
    text = README.read_text(encoding="utf-8")
    assert safety_table() in text, "README's safety table differs from tools.sandbox.safety_table()"


def test_shell_env_of_process_module_is_filtered(monkeypatch: pytest.MonkeyPatch) -> None:
    from tools.process import shell_env

    monkeypatch.setenv("FOO_TOKEN", "x")
    monkeypatch.setenv("TAU_TEST_PLAIN", "y")
    env = shell_env()
    assert "FOO_TOKEN" not in env and env["TAU_TEST_PLAIN"] == "y" and env["GIT_PAGER"] == "cat"
    assert os.environ["FOO_TOKEN"] == "x"  # tau's own environment is untouched


def test_a_secret_file_created_after_a_scan_is_masked_next_time(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    for d in (root, root / "sub"):
        os.utime(d, (1_000_000_000, 1_000_000_000))  # settled: its listing is remembered
    assert hidden_paths(root).files == ()
    (root / "sub" / "id_ed25519").write_text("key\n")
    (root / ".env").write_text("K=1\n")  # right after the scan, in the same second
    assert set(hidden_paths(root).files) == {str(root / ".env"), str(root / "sub" / "id_ed25519")}
