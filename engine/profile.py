"""The per-machine cache: JSON files of what the engine measured about a model on this machine.

A machine is its CPU (model name and a hash of its feature flags, so a session moved to
another host type measures again), its core count, the llama.cpp build and GPU or CPU; the
hostname is deliberately not part of it (sessions move between hosts of one type).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from pathlib import Path
from typing import Any

CURVE_VERSION = 8  # 6: n-row passes measured in a stream of single-row steps; 7: charged the two steps after them; 8: up to 64 rows


def cpu_fingerprint(cpuinfo: str = "/proc/cpuinfo") -> str:
    """CPU model name plus a short hash of its flags (AMX, AVX-512 ... change what is fastest)."""
    name, flags = "", ""
    try:
        for line in Path(cpuinfo).read_text(errors="replace").splitlines():
            key, _, val = line.partition(":")
            key = key.strip()
            if key == "model name" and not name:
                name = val.strip()
            elif key in ("flags", "Features") and not flags:
                flags = " ".join(sorted(val.split()))
    except OSError:
        pass
    name = name or platform.processor() or platform.machine()
    digest = hashlib.sha1(flags.encode()).hexdigest()[:8] if flags else "noflags"
    return f"{name}-{digest}"


def _safe(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in s)[:120]


def machine_id(gpu: bool, build: str = "") -> str:
    parts = [cpu_fingerprint(), f"{os.cpu_count()}cpu", build, "gpu" if gpu else "cpu"]
    return _safe("-".join(p for p in parts if p))


def model_id(model_path: str) -> str:
    p = Path(model_path)
    size = p.stat().st_size if p.exists() else 0
    return _safe(f"{p.stem}-{size}")


def profile_path(cache_dir: str, model_path: str, gpu: bool, threads: int, build: str = "", variant: str = "") -> Path | None:
    """The verify curve, draft cost and bandwidth of one model at one thread count; ``variant``
    names what else the curve was measured with (the weight layout, flash attention), so that an
    engine loaded another way keeps its own file instead of overwriting the one ``tau`` uses."""
    if not cache_dir:
        return None
    tail = f"-{_safe(variant)}" if variant else ""
    return Path(cache_dir) / "profiles" / f"{model_id(model_path)}-{machine_id(gpu, build)}-t{threads}{tail}.json"


def calibration_path(cache_dir: str, model_path: str, build: str = "") -> Path | None:
    """The calibrated load settings (weight layout, threads, flash attention) beside the profiles."""
    if not cache_dir:
        return None
    return Path(cache_dir) / "profiles" / f"{calibration_stem(model_path)}{_safe(build)}-calibration.json"


def calibration_stem(model_path: str) -> str:
    """What every build's calibration file of this model on this CPU starts with."""
    return f"{model_id(model_path)}-{machine_id(False)}-"


def load_profile(path: Path | None) -> dict[str, Any]:
    if path is None or not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def save_profile(path: Path | None, data: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)
