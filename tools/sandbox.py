"""What confines a shell command in each permission mode, and the bubblewrap command line
that does it. Pure: the host is looked at in ``tools.sandbox_host``.

One function, ``confinement``, decides for every mode whether bwrap is used and what it
confines; the README's safety table is rendered from it (``safety_table``) and a test keeps
the two equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from tools.permissions import needs_approval
from tools.permissions_types import MODES

# variables the shell never sees unless allowed (matched upper-cased, shell globs)
SECRET_ENV_PATTERNS = (
    "*_KEY",
    "*_KEYS",
    "*_KEY_ID",
    "*_TOKEN",
    "*_TOKENS",
    "*_SECRET",
    "*_SECRETS",
    "*_SECRET_*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_CREDENTIALS",
    "*_CREDENTIAL",
    "AWS_*",
    "AZURE_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DATABASE_URL",
)
# set for every command: no pager can wait for a keypress
SHELL_ENV_DEFAULTS = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "NO_COLOR": "1"}
# network is on by default only where the user approves each command
NETWORK_BY_DEFAULT = {"ask": True, "auto-edit": False, "full-auto": False}


@dataclass(frozen=True)
class ShellOptions:
    """The session's shell settings (config keys ``shell_*``), handed to run_shell per call."""

    mode: str = "full-auto"
    network: bool | None = None  # None: the mode's default (NETWORK_BY_DEFAULT)
    sandbox: bool = True  # False: never use bwrap, even when present
    env_allow: tuple[str, ...] = ()  # variable names or globs let through the filter


@dataclass(frozen=True)
class Confinement:
    """What one mode confines for a shell command; every field is a promise a test checks."""

    mode: str
    asks_first: bool  # the user approves each command
    bwrap: bool  # the command runs inside bubblewrap
    writes_confined: bool  # writes land only in the workspace (minus .git) and a private /tmp
    secrets_masked: bool  # secret files in the workspace and home read as unreadable
    network: bool  # the command can use the network
    env_filtered: bool  # *_KEY, *_TOKEN, *_SECRET, *PASSWORD*, AWS_* ... removed
    group_killed: bool  # the command's process group is killed when it returns
    all_killed: bool  # every process it started is killed, setsid/daemonized ones included

    @property
    def notice(self) -> str | None:
        """The one-line warning a front end shows when the shell is not confined."""
        if self.bwrap:
            return None
        net = "" if self.network else " or the network,"
        return (
            "the shell is unconfined: bwrap (Debian package bubblewrap) is not available, so "
            f"commands can write outside the workspace, read secret files{net} and leave "
            "setsid background jobs behind; only the environment is filtered and the "
            "process group killed"
        )

    def describe(self) -> str:
        """A short line for the model after a failed command: where it runs."""
        if not self.bwrap:
            return ""
        net = "network on" if self.network else "no network"
        return (f"[sandboxed: writes only in the workspace and /tmp, .git read-only (commit with git_commit), "
                f"secret files unreadable, {net}]")


def confinement(mode: str, *, bwrap: bool, options: ShellOptions | None = None) -> Confinement:
    """What applies to a shell command in ``mode`` (pure). ``bwrap``: bubblewrap works here."""
    if mode not in MODES:
        raise ValueError(f"unknown permission mode {mode!r}; expected one of {', '.join(MODES)}")
    opts = options or ShellOptions(mode=mode)
    boxed = bwrap and opts.sandbox
    network = NETWORK_BY_DEFAULT[mode] if opts.network is None else opts.network
    return Confinement(
        mode=mode,
        asks_first=needs_approval(mode, "shell"),
        bwrap=boxed,
        writes_confined=boxed,
        secrets_masked=boxed,
        network=network or not boxed,  # without a network namespace nothing can turn it off
        env_filtered=True,
        group_killed=True,
        all_killed=boxed,
    )


def is_secret_env(name: str, allow: Iterable[str] = ()) -> bool:
    upper = name.upper()
    if any(fnmatchcase(upper, a.upper()) for a in allow):
        return False
    return any(fnmatchcase(upper, pat) for pat in SECRET_ENV_PATTERNS)


def filter_env(env: Mapping[str, str], allow: Iterable[str] = ()) -> dict[str, str]:
    """The environment a shell command gets: secrets removed, pagers disabled (pure)."""
    allowed = tuple(allow)
    kept = {k: v for k, v in env.items() if not is_secret_env(k, allowed)}
    kept.update(SHELL_ENV_DEFAULTS)
    return kept


@dataclass(frozen=True)
class Mounts:
    """Paths to hide from a sandboxed command (absolute)."""

    files: tuple[str, ...] = ()  # each gets /dev/null bound over it
    dirs: tuple[str, ...] = ()  # each gets an empty tmpfs
    read_only: tuple[str, ...] = ()  # inside the workspace but not writable (.git)


def bwrap_argv(
    bwrap: str, root: str, command: str, *, shell: str, network: bool, mounts: Mounts = Mounts()
) -> list[str]:
    """The bubblewrap command line that runs ``command`` confined to ``root`` (pure).

    Order matters: later mounts cover earlier ones, so the workspace goes over the private
    /tmp (a workspace may live under /tmp) and the masks go last."""
    argv = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if not network:
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += ["--bind", root, root]
    for path in mounts.read_only:
        argv += ["--ro-bind", path, path]
    for path in mounts.dirs:
        argv += ["--tmpfs", path]
    for path in mounts.files:
        argv += ["--ro-bind", "/dev/null", path]
    argv += ["--chdir", root, "--setenv", "TMPDIR", "/tmp", "--", shell, "-c", command]
    return argv


_CELL = {True: "yes", False: "no"}
TABLE_COLUMNS: Sequence[tuple[str, str]] = (
    ("asks before each command", "asks_first"),
    ("writes only in workspace + /tmp", "writes_confined"),
    ("secret files unreadable", "secrets_masked"),
    ("network", "network"),
    ("secret env vars removed", "env_filtered"),
    ("process group killed", "group_killed"),
    ("every process killed (setsid too)", "all_killed"),
)


def safety_table() -> str:
    """The README's table: one row per mode, with and without bwrap, default settings."""
    head = "| mode | bwrap | " + " | ".join(title for title, _ in TABLE_COLUMNS) + " |"
    rule = "|" + "---|" * (len(TABLE_COLUMNS) + 2)
    rows = [head, rule]
    for bwrap in (True, False):
        for mode in MODES:
            c = confinement(mode, bwrap=bwrap)
            cells = []
            for _title, attr in TABLE_COLUMNS:
                value = getattr(c, attr)
                cells.append(("on" if value else "off") if attr == "network" else _CELL[value])
            rows.append(f"| `{mode}` | {'present' if bwrap else 'absent'} | " + " | ".join(cells) + " |")
    return "\n".join(rows)
