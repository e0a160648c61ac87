"""The host side of the shell sandbox: is bubblewrap usable here, which paths to hide, and
the launch (argv and environment) of one command. Decisions live in ``tools.sandbox``."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tools.sandbox import Confinement, Mounts, ShellOptions, bwrap_argv, confinement, filter_env
from tools.secret_files import is_secret_path

PROBE_TIMEOUT_S = 10.0
# credentials in the home directory a command has no business reading
HOME_SECRETS = (
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".kube",
    ".docker/config.json",
    ".config/gcloud",
    ".config/gh",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".pgpass",
)
# walked for nothing: dependency trees hold test keys, not the user's secrets, and are big
PRUNED_DIRS = frozenset({"node_modules", "__pycache__"})


@dataclass(frozen=True)
class Launch:
    """How to start one command: ``argv`` None means plain ``bash -c`` without a sandbox."""

    argv: list[str] | None
    env: dict[str, str]
    confinement: Confinement


def shell_path() -> str:
    return shutil.which("bash") or "/bin/sh"


def find_bwrap() -> str | None:
    """The bwrap executable when it exists and can create its namespaces here, else None."""
    path = shutil.which("bwrap")
    return path if path and _works(path) else None


@functools.cache
def _works(path: str) -> bool:
    # a container without user namespaces has bwrap installed yet unable to run anything
    argv = bwrap_argv(path, "/", "true", shell="/bin/sh", network=False)
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def current_confinement(options: ShellOptions) -> Confinement:
    return confinement(options.mode, bwrap=options.sandbox and find_bwrap() is not None, options=options)


def prepare(command: str, root: Path, options: ShellOptions, env: Mapping[str, str] | None = None) -> Launch:
    """The launch of ``command`` in workspace ``root`` under ``options``."""
    clean = filter_env(os.environ if env is None else env, options.env_allow)
    bwrap = find_bwrap() if options.sandbox else None
    conf = confinement(options.mode, bwrap=bwrap is not None, options=options)
    if bwrap is None:
        return Launch(None, clean, conf)
    mounts = hidden_paths(root, clean.get("HOME"))
    argv = bwrap_argv(bwrap, str(root), command, shell=shell_path(), network=conf.network, mounts=mounts)
    return Launch(argv, clean, conf)


def hidden_paths(root: Path, home: str | None = None) -> Mounts:
    """Secret files and directories in the workspace (and the home's credentials) to mask,
    and the .git entries to keep read-only: what tau runs later outside the sandbox reads them."""
    files: set[str] = set()
    dirs: set[str] = set()
    read_only: list[str] = []
    stack = [(str(root), "")]
    while stack:
        listing = _listing(*stack.pop())
        read_only += listing.git
        files.update(listing.secret_files)
        for link, link_rel in listing.links:
            _mask_link(root, link, link_rel, files, dirs)
        for path, rel, name in listing.subdirs:
            if os.path.exists(os.path.join(path, "pyvenv.cfg")):
                continue  # a virtualenv (even one named .env) holds packages, not secrets
            if _secret_rel(rel):
                dirs.add(path)
            elif name not in PRUNED_DIRS:
                stack.append((path, rel))
    if home:
        for rel in HOME_SECRETS:
            p = Path(home) / rel
            if p.is_symlink():
                p = p.resolve()
            if root.is_relative_to(p):
                continue
            if p.is_dir():
                dirs.add(str(p))
            elif p.is_file():
                files.add(str(p))
    return Mounts(files=tuple(sorted(files)), dirs=tuple(sorted(dirs)), read_only=tuple(sorted(read_only)))


@dataclass(frozen=True)
class _Listing:
    mtime_ns: int
    git: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()  # (path, rel)
    secret_files: tuple[str, ...] = ()
    subdirs: tuple[tuple[str, str, str], ...] = ()  # (path, rel, name)


_LISTINGS: dict[str, _Listing] = {}
MAX_LISTINGS = 100_000
SETTLED_NS = 2_000_000_000  # a directory changed this recently may change again within its mtime's tick


def _listing(path: str, rel: str) -> _Listing:
    """One directory's entries that matter, remembered while its mtime holds (names and types
    change only with the directory's mtime): a big workspace is walked before every command."""
    try:
        mtime = os.stat(path).st_mtime_ns
        cached = _LISTINGS.get(path)
        if cached is not None and cached.mtime_ns == mtime:
            return cached
        with os.scandir(path) as it:
            entries = list(it)
    except OSError:
        return _Listing(0)
    git: list[str] = []
    links: list[tuple[str, str]] = []
    secret: list[str] = []
    subdirs: list[tuple[str, str, str]] = []
    for e in entries:  # scandir's cached entry types: no stat per file
        erel = f"{rel}/{e.name}" if rel else e.name
        if e.name == ".git":
            git.append(e.path)  # a directory, or a worktree's pointer to its git dir
        elif e.is_symlink():
            links.append((e.path, erel))
        elif e.is_dir(follow_symlinks=False):
            subdirs.append((e.path, erel, e.name))
        elif e.is_file(follow_symlinks=False) and _secret_rel(erel):
            secret.append(e.path)
    listing = _Listing(mtime, tuple(git), tuple(links), tuple(secret), tuple(subdirs))
    if time.time_ns() - mtime > SETTLED_NS:
        if len(_LISTINGS) >= MAX_LISTINGS:
            _LISTINGS.clear()
        _LISTINGS[path] = listing
    return listing


@functools.lru_cache(maxsize=1 << 18)
def _secret_rel(rel: str) -> bool:
    # a pure rule asked again for every file before every command: remembered per path
    return is_secret_path(rel)


def _mask_link(root: Path, link: str, rel: str, files: set[str], dirs: set[str]) -> None:
    """A secret-named link, or a link to a secret-named file, has its target masked."""
    target = os.path.realpath(link)
    if not (_secret_rel(rel) or _secret_rel(os.path.basename(target))):
        return
    if target == os.sep or root.is_relative_to(target):
        return  # a mask over the workspace or above it would hide the work itself
    if os.path.isdir(target):
        dirs.add(target)
    elif os.path.isfile(target):  # dangling or looping links lead nowhere: nothing to mask
        files.add(target)
