"""The runtime directory (where `tau serve` announces itself) is chosen without platformdirs'
RuntimeDirWarning when XDG_RUNTIME_DIR is unset, as it is over ssh and in containers."""

import os
import subprocess
import sys
from pathlib import Path

CODE = (
    "import warnings; warnings.simplefilter('always')\n"
    "from app.config import runtime_dir\n"
    "from app import announce\n"
    "print(runtime_dir()); announce.running_servers()\n"
)


def _run(env: dict, warnings: str = "always") -> subprocess.CompletedProcess:
    root = Path(__file__).resolve().parents[2]
    code = CODE.replace("'always'", repr(warnings))
    return subprocess.run([sys.executable, "-W", warnings, "-c", code], cwd=root, env=env,
                          capture_output=True, text=True, timeout=60)


def test_no_warning_without_xdg_runtime_dir(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "TAU_RUNTIME_DIR")}
    env["TAU_STATE_DIR"] = str(tmp_path / "state")
    r = _run(env)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    got = Path(r.stdout.strip())
    assert got == tmp_path / "state" / "run" or got == Path(f"/run/user/{os.getuid()}/tau")
    strict = _run(env, "error")  # warnings as errors: nothing to raise
    assert strict.returncode == 0 and Path(strict.stdout.strip()) == got, strict.stderr


def test_xdg_runtime_dir_and_tau_runtime_dir_are_used(tmp_path):
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(xdg), "TAU_STATE_DIR": str(tmp_path / "state")}
    env.pop("TAU_RUNTIME_DIR", None)
    r = _run(env)
    assert r.returncode == 0 and r.stderr == "" and Path(r.stdout.strip()).is_relative_to(xdg), r.stderr
    r = _run({**env, "TAU_RUNTIME_DIR": str(tmp_path / "rt")})
    assert Path(r.stdout.strip()) == tmp_path / "rt"
