"""Finding 4: git quotes non-ASCII paths; the secret filter must see them unquoted, so
``déploiement/.env`` is neither shown by git_diff nor committed by git_commit, and the commit
report lists exactly what was committed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tools.base import ToolContext
from tools.git_tools import GitCommit, GitDiff, hide_secret_diffs

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@t"}
SECRET = "TOKEN=hunter2-secret"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=ENV).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "README.md").write_text("# r\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "init")
    return root


def test_git_diff_hides_a_secret_file_under_a_non_ascii_folder(repo: Path) -> None:
    d = repo / "déploiement"
    d.mkdir()
    (d / ".env").write_text("TOKEN=old\n")
    (d / "notes été.md").write_text("a\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "tracked by mistake")
    (d / ".env").write_text(SECRET + "\n")
    (d / "notes été.md").write_text("b\n")
    out = GitDiff().run({}, ToolContext(root=repo)).output
    assert "hunter2" not in out
    assert "déploiement/.env" in out and "+b" in out


def test_git_commit_leaves_quoted_secret_paths_out_and_reports_the_truth(repo: Path) -> None:
    d = repo / "déploiement"
    d.mkdir()
    (d / ".env").write_text(SECRET + "\n")
    (d / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (d / "app.py").write_text("X = 1\n")
    result = GitCommit().run({"message": "deploy"}, ToolContext(root=repo))
    assert result.ok, result.output
    committed = _git(repo, "-c", "core.quotePath=false", "show", "--name-only", "--format=", "HEAD").split()
    assert committed == ["déploiement/app.py"]
    assert result.paths == ("déploiement/app.py",)
    assert "(1 file(s))" in result.output.splitlines()[0]
    assert "not committed (may hold secrets): déploiement/.env, déploiement/id_rsa" in result.output
    status = _git(repo, "-c", "core.quotePath=false", "status", "--porcelain")
    assert "?? déploiement/.env" in status and "?? déploiement/id_rsa" in status


def test_hide_secret_diffs_reads_quoted_headers() -> None:
    diff = ('diff --git "a/d\\303\\251p/.env" "b/d\\303\\251p/.env"\n+S\n'
            "diff --git a/ok.py b/ok.py\n+ok\n")
    shown, hidden = hide_secret_diffs(diff)
    assert shown == "diff --git a/ok.py b/ok.py\n+ok\n" and hidden == ["dép/.env"]
