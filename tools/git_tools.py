"""git_status, git_diff, git_log and git_commit, run through ``tools.gitcmd`` (safe overrides).

Paths print relative to the workspace root. File lists are read NUL-separated (``-z``), so
no path is ever quoted past the secret-file filter: diffs of files that may hold secrets are
not shown, and such files are never staged by git_commit.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from tools.base import ToolContext, ToolResult
from tools.capping import cap_text
from tools.gitcmd import GitUnavailable, nul_split, run_git
from tools.permissions_types import ApprovalRequest
from tools.secret_files import is_secret_path
from tools.toolkit import BaseTool, ToolError, arg_int, arg_str, ask, workspace_path

OUTPUT_CAP = 30_000
COMMIT_TIMEOUT_S = 120  # hooks are off (tools.gitcmd), but a huge index can still be slow
_DIFF_HEAD = re.compile(r'^diff --git (?:a/(?P<a>.*?)|"a/(?P<qa>(?:[^"\\]|\\.)*)") (?:b/(?P<b>.*)|"b/(?P<qb>(?:[^"\\]|\\.)*)")$')
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_DIFF_OPTS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--relative")


def git(ctx: ToolContext, *args: str, timeout: float = 30.0) -> str:
    """stdout of ``git args`` in the workspace; a failure becomes a ToolError."""
    try:
        return run_git(ctx.root, *args, timeout=timeout, check=True).stdout
    except GitUnavailable as e:
        raise ToolError(f"git failed: {e}") from None


def open_repo(ctx: ToolContext) -> None:
    try:
        out = run_git(ctx.root, "rev-parse", "--show-toplevel", timeout=10)
    except GitUnavailable as e:
        raise ToolError(f"git failed: {e}") from None
    if not out.ok:
        raise ToolError(f"the workspace {ctx.root} is not inside a git repository")


def has_head(ctx: ToolContext) -> bool:
    try:
        return run_git(ctx.root, "rev-parse", "--verify", "-q", "HEAD", timeout=10).ok
    except GitUnavailable as e:
        raise ToolError(f"git failed: {e}") from None


def c_unquote(text: str) -> str:
    """A path as git's C-style quoting spells it, unquoted (pure)."""
    out = bytearray()
    i = 0
    raw = text.encode("utf-8", errors="surrogateescape")
    while i < len(raw):
        c = raw[i]
        if c == 0x5C and i + 1 < len(raw):  # backslash
            nxt = chr(raw[i + 1])
            if i + 4 <= len(raw) and all(chr(d) in "01234567" for d in raw[i + 1 : i + 4]):
                out.append(int(raw[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_C_ESCAPES.get(nxt, raw[i + 1]))
            i += 2
            continue
        out.append(c)
        i += 1
    return out.decode("utf-8", errors="replace")


def hide_secret_diffs(diff: str) -> tuple[str, list[str]]:
    """Drop the per-file sections of a unified diff whose path may hold secrets (pure);
    quoted (non-ASCII, special-character) paths are unquoted first."""
    out: list[str] = []
    hidden: list[str] = []
    keep = True
    for line in diff.splitlines(keepends=True):
        m = _DIFF_HEAD.match(line.rstrip("\n"))
        if m:
            a = m.group("a") if m.group("a") is not None else c_unquote(m.group("qa") or "")
            b = m.group("b") if m.group("b") is not None else c_unquote(m.group("qb") or "")
            keep = not (is_secret_path(a) or is_secret_path(b))
            if not keep:
                hidden.append(b)
        elif line.startswith("diff --git "):  # a header this parser cannot read: hide, do not guess
            keep = False
            hidden.append(line[len("diff --git ") :].strip())
        if keep:
            out.append(line)
    return "".join(out), hidden


def _excludes(names: list[str]) -> list[str]:
    return [f":(literal,exclude){n}" for n in names]


class GitStatus(BaseTool):
    name = "git_status"
    description = "Show the current branch and the changed, staged and untracked files."
    parameters: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    kind = "git"

    def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        open_repo(ctx)
        lines = git(ctx, "status", "--short", "--branch", "--untracked-files=all", "--", ".").splitlines()
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
        open_repo(ctx)
        target, _rel = workspace_path(ctx, arg_str(args, "path") or ".")
        spec = str(target)
        bases = [("HEAD",)] if has_head(ctx) else [("--cached",), ()]
        names: list[str] = []
        for base in bases:
            names += nul_split(git(ctx, "diff", *base, *_DIFF_OPTS, "--name-only", "-z", "--", spec))
        secret = sorted({n for n in names if is_secret_path(n)})
        pieces = [git(ctx, "diff", *base, *_DIFF_OPTS, "--", spec, *_excludes(secret)) for base in bases]
        diff, hidden = hide_secret_diffs("\n".join(p for p in pieces if p))
        hidden = sorted(set(secret) | set(hidden))
        untracked = nul_split(git(ctx, "ls-files", "-z", "--others", "--exclude-standard", "--", spec))
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
        open_repo(ctx)
        n = max(1, min(arg_int(args, "n", 10) or 10, 200))
        if not has_head(ctx):
            return ToolResult(ok=True, output="no commits yet")
        out = git(ctx, "log", f"-n{n}", "-z", "--date=format:%Y-%m-%d %H:%M", "--format=%H%x1f%cd%x1f%an%x1f%s")
        lines = []
        for entry in nul_split(out):
            sha, date, author, subject = (entry.strip("\n").split("\x1f") + ["", "", "", ""])[:4]
            lines.append(f"{sha[:8]} {date} {author}: {subject}")
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
        if "\x00" in message:
            raise ToolError("the commit message contains a NUL byte")
        open_repo(ctx)
        summary = message.splitlines()[0]
        rejection = ask(
            ctx,
            ApprovalRequest(
                kind="commit",
                tool=self.name,
                summary=f"git commit -m {summary!r}",
                command=f"git add -A . && git commit -m {shlex.quote(message)}",
            ),
        )
        if rejection is not None:
            return rejection
        git(ctx, "add", "-A", "--", ".")
        staged = nul_split(git(ctx, "diff", "--cached", "--name-only", "-z", "--no-renames", "--relative"))
        secret = [p for p in staged if is_secret_path(p)]
        if secret:
            literal = [f":(literal){p}" for p in secret]
            if has_head(ctx):
                git(ctx, "reset", "-q", "--", *literal)
            else:
                git(ctx, "rm", "-q", "--cached", "--", *literal)
        if not git(ctx, "diff", "--cached", "--name-only", "-z").strip("\x00"):
            note = " (files that may hold secrets were left out)" if secret else ""
            return ToolResult(ok=False, output=f"nothing to commit{note}")
        git(ctx, "commit", "-q", "--no-verify", "-m", message, timeout=COMMIT_TIMEOUT_S)
        committed = self._committed(ctx)
        sha = git(ctx, "rev-parse", "HEAD").strip()[:8]
        lines = [f"committed {sha}: {summary} ({len(committed)} file(s))"]
        if secret:
            lines.append(f"not committed (may hold secrets): {', '.join(secret)}")
        return ToolResult(ok=True, output="\n".join(lines), paths=tuple(committed))

    @staticmethod
    def _committed(ctx: ToolContext) -> list[str]:
        """What HEAD changed, relative to the workspace (outside it: repository-relative)."""
        prefix = git(ctx, "rev-parse", "--show-prefix").strip()
        names = nul_split(git(ctx, "diff-tree", "-r", "--root", "--no-commit-id", "--no-renames", "--name-only", "-z", "HEAD"))
        return [n[len(prefix) :] if prefix and n.startswith(prefix) else str(Path(n)) for n in names]
