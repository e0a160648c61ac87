"""Finding 1: an unapproved write must never plant something git runs later (a root-level git
directory, nested .git, case variants, core.hooksPath targets), and tau's own git calls run
with overrides that keep a planted config from running code."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tools.base import ToolContext
from tools.file_edit import WriteFile
from tools.git_tools import GitStatus
from tools.gitcmd import git_argv, run_git

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@t"}


def _write(root: Path, rel: str, content: str = "x\n") -> tuple[bool, str]:
    result = WriteFile().run({"path": rel, "content": content}, ToolContext(root=root))
    return result.ok, result.output


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=ENV)


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    root = tmp_path / "plain"
    root.mkdir()
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "a.txt").write_text("a\n")
    _git(root, "add", "a.txt")
    _git(root, "commit", "-q", "-m", "init")
    return root


def test_the_audit_repro_plants_no_git_directory_in_a_root_without_git(plain: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    planted = {
        "HEAD": "ref: refs/heads/main\n",
        "config": f'[core]\n bare=false\n worktree=.\n fsmonitor="touch {marker}; false"\n',
        "objects/info/keep": "",
        "refs/heads/keep": "",
    }
    results = {rel: _write(plain, rel, text) for rel, text in planted.items()}
    assert all(not ok for ok, _ in results.values()), results
    assert all("refusing to write" in out for _, out in results.values())
    for rel in planted:
        assert not (plain / rel).exists()
    GitStatus().run({}, ToolContext(root=plain))
    assert not marker.exists()


@pytest.mark.parametrize("rel", ["packed-refs", "hooks/pre-commit", "info/attributes", "head", "Config"])
def test_other_root_level_git_names_are_refused_without_git(plain: Path, rel: str) -> None:
    ok, out = _write(plain, rel)
    assert not ok and "refusing to write" in out


def test_ordinary_files_in_a_root_without_git_stay_writable(plain: Path) -> None:
    assert _write(plain, "config/settings.py")[0]
    assert _write(plain, "src/refs.py")[0]


@pytest.mark.parametrize(
    "rel", ["vendor/lib/.git/config", ".GIT/hooks/pre-commit", ".Git/config", "sub/.git", "a/.git./config"]
)
def test_nested_and_case_variant_git_dirs_are_refused(repo: Path, rel: str) -> None:
    ok, out = _write(repo, rel)
    assert not ok and "refusing to write" in out
    assert not (repo / rel).exists()


def test_writes_under_core_hooks_path_are_refused(repo: Path) -> None:
    _git(repo, "config", "core.hooksPath", ".husky")
    ok, out = _write(repo, ".husky/pre-commit", "#!/bin/sh\ntouch /tmp/x\n")
    assert not ok and "hooks" in out
    assert not (repo / ".husky" / "pre-commit").exists()
    assert _write(repo, "husky.md")[0]  # only the hooks directory itself


def test_husky_9_scripts_beside_its_hooks_path_are_refused(repo: Path) -> None:
    _git(repo, "config", "core.hooksPath", ".husky/_")  # .husky/_/h runs .husky/<hook>
    ok, out = _write(repo, ".husky/pre-commit", "touch /tmp/x\n")
    assert not ok and "hooks" in out


def test_tau_git_calls_do_not_run_a_planted_fsmonitor_or_hook(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    _git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    (repo / "a.txt").write_text("changed\n")
    assert run_git(repo, "status", "--porcelain").ok
    run_git(repo, "commit", "-q", "-am", "x")
    assert not marker.exists()
    argv = git_argv("status")
    assert "core.fsmonitor=false" in argv and "core.hooksPath=/dev/null" in argv


def test_git_is_not_run_in_a_root_that_already_is_a_git_directory(plain: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    (plain / "HEAD").write_text("ref: refs/heads/main\n")
    (plain / "config").write_text(f'[core]\n bare=false\n worktree=.\n fsmonitor="touch {marker}; false"\n')
    (plain / "objects" / "info").mkdir(parents=True)
    (plain / "refs" / "heads").mkdir(parents=True)
    result = GitStatus().run({}, ToolContext(root=plain))
    assert not result.ok and "git directory" in result.output
    assert not marker.exists()


def test_the_agents_own_git_reads_run_no_planted_config(plain: Path, repo: Path, tmp_path: Path) -> None:
    from app.agent.repomap import list_files
    from app.agent.workspace import git_diff, is_git_repo

    marker = tmp_path / "ran"
    (plain / "HEAD").write_text("ref: refs/heads/main\n")  # planted some other way, before tau started
    (plain / "config").write_text(f'[core]\n bare=false\n worktree=.\n fsmonitor="touch {marker}; false"\n')
    (plain / "objects" / "info").mkdir(parents=True)
    (plain / "refs" / "heads").mkdir(parents=True)
    (plain / "main.py").write_text("x = 1\n")
    assert "main.py" in list_files(plain)
    assert not is_git_repo(plain) and git_diff(plain) == ""
    _git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    (repo / "a.txt").write_text("changed\n")
    assert "a.txt" in list_files(repo) and "+changed" in git_diff(repo)
    assert not marker.exists()
