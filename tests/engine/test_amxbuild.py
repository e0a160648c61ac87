"""The AMX rebuild: GCC 12's tile-config header widened, and llama-cpp-python rebuilt with it first."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from engine.lab import amxbuild

NARROW = '''extern __inline void
_tile_loadconfig (const void *__config)
{
  __asm__ volatile ("ldtilecfg\\t%X0" :: "m" (*((const void **)__config)));
}

extern __inline void
_tile_storeconfig (void *__config)
{
  __asm__ volatile ("sttilecfg\\t%X0" : "=m" (*((void **)__config)));
}
'''

PROBE = r'''#include <immintrin.h>
struct cfg { unsigned char palette, start, reserved[14]; unsigned short colsb[16]; unsigned char rows[16]; };
void configure(unsigned char rows, unsigned short colsb) {
    struct cfg c = {0};
    c.palette = 1;
    c.rows[0] = rows;
    c.colsb[0] = colsb;
    _tile_loadconfig(&c);
}
'''


def test_widening_covers_the_whole_configuration_and_refuses_other_headers() -> None:
    wide = amxbuild.widen(NARROW)
    assert amxbuild.is_narrow(NARROW) and not amxbuild.is_narrow(wide)
    assert '"m" (*(const char (*)[64]) __config)' in wide and '"=m" (*(char (*)[64]) __config)' in wide
    with pytest.raises(amxbuild.AmxBuildError):
        amxbuild.widen(wide)


def _asm(cxx: str, include: list[str], tmp: Path) -> str:
    src = tmp / "probe.c"
    src.write_text(PROBE)
    out = subprocess.run([cxx, *include, "-x", "c", "-O2", "-mamx-tile", "-S", "-o", "-", str(src)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_widened_header_keeps_the_tile_rows_that_gcc_12_drops(tmp_path) -> None:
    hc = amxbuild.check()
    if hc.path is None or not hc.narrow or shutil.which(amxbuild.compiler()) is None:
        pytest.skip("this compiler's AMX header is not GCC 12's 8-byte form")
    uses_args = re.compile(r"%(dil|di|edi|rdi|sil|si|esi|rsi)\b")
    # before: the stores of the rows and columns (the function's arguments) are dead to the compiler
    assert not uses_args.search(_asm(amxbuild.compiler(), [], tmp_path))
    fix = amxbuild.write_fix(hc.path, tmp_path / "fix")
    assert uses_args.search(_asm(amxbuild.compiler(), [f"-I{fix}"], tmp_path))


def test_the_rebuild_pins_the_installed_version_and_puts_the_fix_first(tmp_path, monkeypatch) -> None:
    header = tmp_path / "amxtileintrin.h"
    header.write_text(NARROW)
    monkeypatch.setattr(amxbuild, "check", lambda cxx=None: amxbuild.HeaderCheck(str(header), True))
    monkeypatch.setattr(amxbuild, "installed_version", lambda: "0.3.36")
    monkeypatch.setenv("CMAKE_ARGS", "-DGGML_NATIVE=ON")
    seen = {}

    def run(cmd, env):
        seen.update(cmd=cmd, env=env)
        return subprocess.CompletedProcess(cmd, 0)

    fix = amxbuild.rebuild(tmp_path / "cache" / "amxfix", run=run)
    assert not amxbuild.is_narrow((fix / "amxtileintrin.h").read_text())
    assert seen["cmd"][-1] == "llama-cpp-python==0.3.36" and "--no-cache-dir" in seen["cmd"]
    args = seen["env"]["CMAKE_ARGS"]
    assert args.startswith("-DGGML_NATIVE=ON ") and f"-DCMAKE_CXX_FLAGS=-I{fix}" in args

    monkeypatch.setattr(amxbuild, "check", lambda cxx=None: amxbuild.HeaderCheck(str(header), False))
    with pytest.raises(amxbuild.AmxBuildError, match="nothing to fix"):
        amxbuild.rebuild(tmp_path / "again", run=run)
