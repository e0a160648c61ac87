from __future__ import annotations

from pathlib import Path

import git

from tools.base import ToolContext
from tools.git_tools import GitCommit, GitDiff, GitLog, GitStatus, hide_secret_diffs


def test_git_status(root: Path, repo: git.Repo, ctx: ToolContext) -> None:
    clean = GitStatus().run({}, ctx)
    assert clean.ok and clean.output.startswith(f"## {repo.active_branch.name}")
    assert "nothing changed" in clean.output
    (root / "src" / "app.py").write_text("changed\n")
    (root / "new.txt").write_text("new\n")
    out = GitStatus().run({}, ctx).output.splitlines()
    assert " M src/app.py" in out and "?? new.txt" in out


def test_git_diff_all_and_one_path(root: Path, ctx: ToolContext) -> None:
    assert GitDiff().run({}, ctx).output == "no uncommitted changes"
    (root / "src" / "app.py").write_text("def main():\n    print('bye')\n    return 0\n")
    (root / "README.md").write_text("# demo\nmore\n")
    (root / "untracked.txt").write_text("u\n")
    full = GitDiff().run({}, ctx)
    assert full.ok
    assert "-    print('hello')\n+    print('bye')" in full.output
    assert "+more" in full.output
    assert "untracked files (not in the diff): untracked.txt" in full.output
    one = GitDiff().run({"path": "README.md"}, ctx).output
    assert "+more" in one and "print" not in one
    assert not GitDiff().run({"path": "../x"}, ctx).ok


def test_git_diff_hides_secret_files(root: Path, repo: git.Repo, ctx: ToolContext) -> None:
    (root / ".env").write_text("TOKEN=old\n")
    repo.index.add([".env"])
    repo.index.commit("oops, tracked env")
    (root / ".env").write_text("TOKEN=new-secret\n")
    (root / "README.md").write_text("# changed\n")
    out = GitDiff().run({}, ctx).output
    assert "new-secret" not in out and "+# changed" in out
    assert "[diff not shown for files that may hold secrets: .env]" in out


def test_hide_secret_diffs_is_pure() -> None:
    diff = "diff --git a/x.pem b/x.pem\n+KEY\ndiff --git a/a.py b/a.py\n+ok\n"
    shown, hidden = hide_secret_diffs(diff)
    assert shown == "diff --git a/a.py b/a.py\n+ok\n" and hidden == ["x.pem"]


def test_git_log(repo: git.Repo, root: Path, ctx: ToolContext) -> None:
    for i in range(3):
        (root / f"f{i}.txt").write_text(str(i))
        repo.index.add([f"f{i}.txt"])
        repo.index.commit(f"commit {i}")
    out = GitLog().run({"n": 2}, ctx).output.splitlines()
    assert len(out) == 2
    assert out[0].endswith("Test User: commit 2") and out[1].endswith("Test User: commit 1")
    assert out[0].split()[0] == repo.head.commit.hexsha[:8]
    assert len(GitLog().run({}, ctx).output.splitlines()) == 4


def test_git_commit_stages_everything_but_secrets(root: Path, repo: git.Repo, ctx: ToolContext) -> None:
    (root / "src" / "app.py").write_text("changed\n")
    (root / "added.py").write_text("A = 1\n")
    (root / "prod.key").write_text("PRIVATE\n")
    result = GitCommit().run({"message": "Change app\n\nBody text."}, ctx)
    assert result.ok, result.output
    head = repo.head.commit
    assert head.message == "Change app\n\nBody text.\n"
    assert result.output.splitlines()[0] == f"committed {head.hexsha[:8]}: Change app (2 file(s))"
    assert "not committed (may hold secrets): prod.key" in result.output
    assert sorted(head.stats.files) == ["added.py", "src/app.py"]
    assert repo.untracked_files == ["prod.key"] and not repo.is_dirty()
    again = GitCommit().run({"message": "again"}, ctx)
    assert not again.ok and again.output.startswith("nothing to commit")
    assert not GitCommit().run({"message": "  "}, ctx).ok


def test_fresh_repository_without_commits(tmp_path: Path, make_ctx) -> None:
    r = git.Repo.init(tmp_path)
    with r.config_writer() as cw:
        cw.set_value("user", "name", "T")
        cw.set_value("user", "email", "t@example.com")
    ctx = make_ctx(tmp_path.resolve())
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / ".env").write_text("S=1\n")
    assert GitLog().run({}, ctx).output == "no commits yet"
    assert "untracked files (not in the diff): .env, a.txt" in GitDiff().run({}, ctx).output
    result = GitCommit().run({"message": "first"}, ctx)
    assert result.ok, result.output
    assert sorted(r.head.commit.stats.files) == ["a.txt"]


def test_git_tools_outside_a_repository(tmp_path: Path, make_ctx) -> None:
    ctx = make_ctx(tmp_path.resolve())
    for tool in (GitStatus(), GitDiff(), GitLog(), GitCommit()):
        result = tool.run({"message": "x"}, ctx)
        assert not result.ok and "not inside a git repository" in result.output
