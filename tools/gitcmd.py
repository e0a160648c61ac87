"""The one way tau runs git: with overrides that keep a planted config from running code.

A repository's own config (or a workspace root that git reads as a git directory) can name
commands git runs by itself: ``core.fsmonitor`` on any index refresh, hooks on commit, a
pager, an editor, external diff and textconv drivers. Every git call tau makes goes through
``run_git``, which switches those off on the command line (which wins over every config
file), skips the system config and never prompts.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TIMEOUT_S = 30.0
SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=true",
    "core.askPass=",
    "core.sshCommand=false",
    "core.quotePath=false",
    "diff.external=",
    "credential.helper=",
    "protocol.allow=never",
)
SAFE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": "true",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C.UTF-8",
}
# variables that would redirect git to another repository or run a program
DROPPED_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
)


class GitUnavailable(Exception):
    """git could not be run here (not installed, timed out, or refused); the message says why."""


@dataclass(frozen=True)
class GitOutput:
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def git_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment git runs with (pure): the caller's, minus redirections, plus SAFE_ENV."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in DROPPED_ENV}
    env.update(SAFE_ENV)
    return env


def git_argv(*args: str, safe_hooks: bool = True) -> list[str]:
    """The full git command line for ``args`` (pure)."""
    argv = ["git"]
    for item in SAFE_CONFIG:
        if safe_hooks or not item.startswith("core.hooksPath="):
            argv += ["-c", item]
    return argv + list(args)


def root_is_git_dir(root: Path) -> bool:
    """Whether git would take the workspace root itself for a git directory (no ``.git`` entry,
    but a ``HEAD`` beside ``objects``/``refs``): then its config is nobody's to trust."""
    if os.path.lexists(root / ".git"):
        return False
    try:
        names = {n.casefold() for n in os.listdir(root)}
    except OSError:
        return False
    return "head" in names and ("objects" in names or "refs" in names or "commondir" in names)


def run_git(
    root: Path,
    *args: str,
    timeout: float = DEFAULT_TIMEOUT_S,
    check: bool = False,
    safe_hooks: bool = True,
) -> GitOutput:
    """Run ``git args`` in ``root`` with the safe overrides. Raises ``GitUnavailable`` when git
    cannot run, and with ``check`` when it exits non-zero (the message is git's first error)."""
    root = Path(root)
    if root_is_git_dir(root):
        raise GitUnavailable(
            f"refusing to run git in {root}: the folder itself looks like a git directory "
            "(HEAD, objects, refs without .git), so its config could run commands"
        )
    for a in args:
        if "\x00" in a:
            raise GitUnavailable("a git argument contains a NUL byte")
    try:
        proc = subprocess.run(
            git_argv(*args, safe_hooks=safe_hooks),
            cwd=root,
            env=git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GitUnavailable(f"git {args[0] if args else ''} timed out after {timeout:g}s") from None
    except (OSError, UnicodeError, ValueError) as e:
        raise GitUnavailable(f"cannot run git: {e}") from None
    out = GitOutput(
        proc.returncode,
        proc.stdout.decode("utf-8", errors="surrogateescape"),
        proc.stderr.decode("utf-8", errors="replace"),
    )
    if check and not out.ok:
        raise GitUnavailable(first_error(out))
    return out


def first_error(out: GitOutput) -> str:
    """git's error message in one line (pure)."""
    text = (out.stderr or out.stdout).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    fatal = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
    return (fatal or lines or [f"git exited with status {out.returncode}"])[0]


def nul_split(text: str) -> list[str]:
    """Entries of ``-z`` output (pure)."""
    return [p for p in text.split("\x00") if p]


def hooks_dir(root: Path) -> Path | None:
    """The directory git runs hooks from for the user's own git commands (``core.hooksPath``
    honoured), absolute; None when the workspace is not in a repository."""
    try:
        out = run_git(root, "rev-parse", "--git-path", "hooks", safe_hooks=False, timeout=10)
    except GitUnavailable:
        return None
    path = out.stdout.strip()
    if not out.ok or not path:
        return None
    p = Path(path)
    return Path(os.path.normpath(p if p.is_absolute() else Path(root) / p))
