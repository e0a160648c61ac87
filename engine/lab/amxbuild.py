"""Rebuild llama-cpp-python so that llama.cpp's AMX kernels run where GCC's header breaks them.

GCC 12's ``_tile_loadconfig`` tells the compiler that ``ldtilecfg`` reads 8 bytes of its 64-byte
operand, so the stores of the tile rows and columns in llama.cpp's ``ggml_tile_config_init`` are
dropped as dead. The tiles stay unconfigured and the first ``tilezero`` raises SIGILL (upstream:
llama.cpp pull request 26954). A copy of the header whose operands cover all 64 bytes, placed first
on the include path, makes the same source compile to a working AMX path; nothing else changes.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HEADER = "amxtileintrin.h"
# GCC 12's operands: a pointer's worth of memory (8 bytes) for a 64-byte tile configuration
_NARROW_LOAD = re.compile(r'"m"\s*\(\*\(\(const void \*\*\)\s*__config\)\)')
_NARROW_STORE = re.compile(r'"=m"\s*\(\*\(\(void \*\*\)\s*__config\)\)')
_WIDE_LOAD = '"m" (*(const char (*)[64]) __config)'
_WIDE_STORE = '"=m" (*(char (*)[64]) __config)'


class AmxBuildError(Exception):
    """The rebuild cannot go ahead; the message says why in one line."""


@dataclass(frozen=True)
class HeaderCheck:
    path: str | None  # the compiler's amxtileintrin.h, None where it has none
    narrow: bool  # its tile-config operands cover 8 of 64 bytes (the bug)


def widen(text: str) -> str:
    """The header with both tile-config operands covering the whole 64-byte configuration."""
    out = _NARROW_STORE.sub(lambda _: _WIDE_STORE, _NARROW_LOAD.sub(lambda _: _WIDE_LOAD, text))
    if out == text:
        raise AmxBuildError("the header's _tile_loadconfig is not GCC's 8-byte form; nothing to fix")
    return out


def is_narrow(text: str) -> bool:
    return bool(_NARROW_LOAD.search(text))


def compiler() -> str:
    return os.environ.get("CXX") or "c++"


def check(cxx: str | None = None) -> HeaderCheck:
    """Where the C++ compiler's AMX tile header is and whether it has the 8-byte operand."""
    try:
        out = subprocess.run([cxx or compiler(), f"-print-file-name=include/{HEADER}"], capture_output=True,
                             text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return HeaderCheck(None, False)
    p = Path(out)
    if not p.is_absolute() or not p.is_file():
        return HeaderCheck(None, False)
    return HeaderCheck(str(p), is_narrow(p.read_text(errors="replace")))


def write_fix(header: str, out_dir: Path) -> Path:
    """Write the widened copy of ``header`` into ``out_dir`` (put first on the include path)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    dst = out_dir / HEADER
    dst.write_text(widen(Path(header).read_text()))
    return out_dir


def cmake_args(fix_dir: Path, existing: str = "") -> str:
    """CMAKE_ARGS for llama-cpp-python's build: the user's own, then the include path for C and C++."""
    inc = shlex.quote(f"-I{fix_dir}")
    return " ".join(a for a in (existing.strip(), f"-DCMAKE_CXX_FLAGS={inc}", f"-DCMAKE_C_FLAGS={inc}") if a)


def pip_command(version: str, python: str = sys.executable) -> list[str]:
    """Rebuild exactly the installed version from source; the wheel cache would hand back the old build."""
    return [python, "-m", "pip", "install", "--force-reinstall", "--no-deps", "--no-cache-dir",
            "--no-binary", "llama-cpp-python", f"llama-cpp-python=={version}"]


def installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("llama_cpp_python")
    except PackageNotFoundError:
        raise AmxBuildError("llama-cpp-python is not installed in this environment") from None


def rebuild(fix_root: Path, run=subprocess.run) -> Path:
    """Write the fixed header under ``fix_root`` and rebuild the installed llama-cpp-python with it."""
    hc = check()
    if hc.path is None:
        raise AmxBuildError(f"{compiler()} has no {HEADER}: its AMX kernels are not built, nothing to fix")
    if not hc.narrow:
        raise AmxBuildError(f"{hc.path} already covers the whole tile configuration; nothing to fix")
    fix_dir = write_fix(hc.path, fix_root)
    env = dict(os.environ, CMAKE_ARGS=cmake_args(fix_dir, os.environ.get("CMAKE_ARGS", "")))
    cmd = pip_command(installed_version())
    print(f"CMAKE_ARGS={env['CMAKE_ARGS']} {shlex.join(cmd)}", file=sys.stderr)
    if run(cmd, env=env).returncode != 0:
        raise AmxBuildError("the rebuild failed (pip's output above); the installed build is unchanged or reinstalled")
    return fix_dir
