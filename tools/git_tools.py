"""git_status, git_diff, git_log and git_commit through GitPython.

Paths print relative to the workspace root. Diffs of files that may hold secrets are not
shown, and such files are never staged by git_commit.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

import git

from tools.base import ToolContext, ToolResult
from tools.capping import cap_text
from tools.permissions_types import ApprovalRequest
from tools.secret_files import is_secret_path
from tools.toolkit import BaseTool, ToolError, arg_int, arg_str, ask, workspace_path

OUTPUT_CAP = 30_000
COMMIT_TIMEOUT_S = 300  # commit hooks can be slow, but not forever
_DIFF_HEAD = re.compile(r"^diff --git a/(.*?) b/(.*)$")


def open_repo(ctx: ToolContext) -> git.Repo:
    try:
        return git.Repo(ctx.root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise ToolError(f"the workspace {ctx.root} is not inside a git repository") from None


def _git(ctx: ToolContext) -> git.Git:
    """A git command runner whose working directory is the workspace root."""
    return git.Git(str(ctx.root))


def _err(e: git.GitCommandError) -> ToolError:
    detail = (e.stderr or e.stdout or str(e)).strip()
    detail = re.sub(r"^\s*stderr: '?|'$", "", detail, flags=re.M).strip()
    return ToolError(f"git failed: {detail}")


def hide_secret_diffs(diff: str) -> tuple[str, list[str]]:
    """Drop the per-file sections of a unified diff whose path may hold secrets (pure)."""
    out: list[str] = []
    hidden: list[str] = []
    keep = True
    for line in diff.splitlines(keepends=True):
        m = _DIFF_HEAD.match(line.rstrip("\n"))
        if m:
            keep = not is_secret_path(m.group(2))
            if not keep:
                hidden.append(m.group(2))
        if keep:
            out.append(line)
    return "".join(out), hidden


class GitStatus(BaseTool):
    name = "git_status"
    description = "Show the current branch and the changed, staged and untracked files."
    parameters: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    kind = "git"

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        open_repo(ctx)
        try:
            out = _git(ctx).status("--short", "--branch", "--untracked-files=all", "--", ".")
        except git.GitCommandError as e:
            raise _err(e) from None
        lines = out.splitlines()
        if len(lines) <= 1:
            lines.append("nothing changed (clean working tree)")
        return ToolResult(ok=True, output=cap_text("\n".join(lines), OUTPUT_CAP))


class GitDiff(BaseTool):
    name = "git_diff"
    description = "Show uncommitted changes (staged and unstaged) as a unified diff, optionally for one path."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "file or directory (default: all)"}},
        "required": [],
    }
    kind = "git"

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        repo = open_repo(ctx)
        target, _rel = workspace_path(ctx, arg_str(args, "path") or ".")
        g = _git(ctx)
        opts = ("--no-color", "--no-ext-diff", "--relative")
        try:
            if repo.head.is_valid():
                diff = g.diff("HEAD", *opts, "--", str(target))
            else:
                diff = "\n".join(
                    x for x in (g.diff("--cached", *opts, "--", str(target)), g.diff(*opts, "--", str(target))) if x
                )
            untracked = g.ls_files("--others", "--exclude-standard", "--", str(target)).splitlines()
        except git.GitCommandError as e:
            raise _err(e) from None
        diff, hidden = hide_secret_diffs(diff)
        parts = [diff.rstrip("\n")] if diff.strip() else []
        if hidden:
            parts.append(f"[diff not shown for files that may hold secrets: {', '.join(hidden)}]")
        if untracked:
            parts.append("untracked files (not in the diff): " + ", ".join(untracked[:50]))
        if not parts:
            return ToolResult(ok=True, output="no uncommitted changes")
        return ToolResult(ok=True, output=cap_text("\n".join(parts), OUTPUT_CAP), diff=diff or None)


class GitLog(BaseTool):
    name = "git_log"
    description = "Show the last n commits (default 10): hash, date, author and subject."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"n": {"type": "integer", "description": "number of commits (default 10)"}},
        "required": [],
    }
    kind = "git"

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        repo = open_repo(ctx)
        n = max(1, min(arg_int(args, "n", 10) or 10, 200))
        if not repo.head.is_valid():
            return ToolResult(ok=True, output="no commits yet")
        lines = [
            f"{c.hexsha[:8]} {c.committed_datetime:%Y-%m-%d %H:%M} {c.author.name}: {c.summary!s}"
            for c in repo.iter_commits(max_count=n)
        ]
        return ToolResult(ok=True, output="\n".join(lines))


class GitCommit(BaseTool):
    name = "git_commit"
    description = "Stage all changes in the workspace (git add -A) and commit them with the given message."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "the commit message"}},
        "required": ["message"],
    }
    kind = "git"

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        message = arg_str(args, "message", required=True).strip()
        if not message:
            raise ToolError("the commit message is empty")
        repo = open_repo(ctx)
        summary = message.splitlines()[0]
        rejection = ask(
            ctx,
            ApprovalRequest(
                kind="shell",
                tool=self.name,
                summary=f"git commit -m {summary!r}",
                command=f"git add -A . && git commit -m {shlex.quote(message)}",
            ),
        )
        if rejection is not None:
            return rejection
        g = _git(ctx)
        try:
            g.add("-A", "--", ".")
            staged = g.diff("--cached", "--name-only", "--relative").splitlines()
            secret = [p for p in staged if is_secret_path(p)]
            if secret:
                if repo.head.is_valid():
                    g.reset("-q", "--", *secret)
                else:
                    g.rm("-q", "--cached", "--", *secret)
                staged = [p for p in staged if p not in secret]
            if not staged:
                note = " (files that may hold secrets were left out)" if secret else ""
                return ToolResult(ok=False, output=f"nothing to commit{note}")
            g.commit("-q", "-m", message, kill_after_timeout=COMMIT_TIMEOUT_S)
        except git.GitCommandError as e:
            raise _err(e) from None
        sha = repo.head.commit.hexsha[:8]
        lines = [f"committed {sha}: {summary} ({len(staged)} file(s))"]
        if secret:
            lines.append(f"not committed (may hold secrets): {', '.join(secret)}")
        return ToolResult(ok=True, output="\n".join(lines), paths=tuple(staged))
