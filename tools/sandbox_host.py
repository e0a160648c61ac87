"""The host side of the shell sandbox: is bubblewrap usable here, which paths to hide, and
the launch (argv and environment) of one command. Decisions live in ``tools.sandbox``."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
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
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        d = Path(dirpath)
        keep = []
        for name in dirnames:
            p = d / name
            if name == ".git":
                read_only.append(str(p))
            elif p.is_symlink():
                _mask_link(root, p, files, dirs)
            elif _is_secret(root, p):
                if not (p / "pyvenv.cfg").exists():  # a virtualenv named .env holds no secrets
                    dirs.add(str(p))
            elif name not in PRUNED_DIRS and not (p / "pyvenv.cfg").exists():
                keep.append(name)
        dirnames[:] = keep
        for name in filenames:
            p = d / name
            if name == ".git":
                read_only.append(str(p))  # a worktree's or submodule's pointer to its git dir
            elif p.is_symlink():
                _mask_link(root, p, files, dirs)
            elif _is_secret(root, p) and p.is_file():
                files.add(str(p))
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


def _is_secret(root: Path, p: Path) -> bool:
    return is_secret_path(p.relative_to(root).as_posix())


def _mask_link(root: Path, link: Path, files: set[str], dirs: set[str]) -> None:
    """A secret-named link, or a link to a secret-named file, has its target masked."""
    try:
        target = link.resolve(strict=True)
    except (OSError, RuntimeError):  # dangling or looping: nothing to read through it
        return
    if not (_is_secret(root, link) or is_secret_path(target.name)) or root.is_relative_to(target):
        return  # a mask over the workspace or above it would hide the work itself
    if target.is_dir():
        dirs.add(str(target))
    elif target.is_file():
        files.add(str(target))
