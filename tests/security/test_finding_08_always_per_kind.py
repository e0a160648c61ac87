"""Finding 8: "always" is remembered per kind of action: git_commit asks as a commit, and an
"always" on a commit approves no shell command."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tools.base import ToolContext
from tools.git_tools import GitCommit
from tools.permissions import Policy
from tools.permissions_types import ApprovalDecision, ApprovalRequest
from tools.shell import RunShell

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


class AlwaysOnce:
    """Says "always" to the first request, then refuses everything."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        first = len(self.asked) == 1
        return ApprovalDecision(first, always=first, note="" if first else "no")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env={**os.environ, **ENV})
    return root


@pytest.mark.parametrize("mode", ["ask", "auto-edit"])
def test_always_on_a_commit_does_not_approve_shell_commands(repo: Path, mode: str) -> None:
    approver = AlwaysOnce()
    ctx = ToolContext(root=repo, policy=Policy(mode, approver))
    (repo / "a.txt").write_text("a\n")
    assert GitCommit().run({"message": "first"}, ctx).ok
    shell = RunShell().run({"command": "touch pwned"}, ctx)
    assert not shell.ok and not (repo / "pwned").exists()
    assert [r.kind for r in approver.asked] == ["commit", "shell"]
    (repo / "b.txt").write_text("b\n")
    assert GitCommit().run({"message": "second"}, ctx).ok  # the commit's own "always" holds
    assert len(approver.asked) == 2


def test_full_auto_commits_without_asking(repo: Path) -> None:
    approver = AlwaysOnce()
    (repo / "a.txt").write_text("a\n")
    assert GitCommit().run({"message": "auto"}, ToolContext(root=repo, policy=Policy("full-auto", approver))).ok
    assert approver.asked == []
