"""Free memory on this machine: GPUs (``nvidia-smi`` / ``rocm-smi``) and the host (/proc/meminfo)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

GiB = 1 << 30
MiB = 1 << 20


@dataclass(frozen=True)
class DeviceMemory:
    kind: str  # cuda | rocm | cpu
    name: str
    total: int  # bytes, summed over devices
    free: int
    count: int = 1



def _run(cmd: list[str], timeout: float = 5.0) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def nvidia_devices() -> DeviceMemory | None:
    out = _run(["nvidia-smi", "--query-gpu=name,memory.total,memory.free", "--format=csv,noheader,nounits"])
    if not out:
        return None
    names, total, free = [], 0, 0
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    rows = [r for r in out.strip().splitlines() if r.strip()]
    for i, row in enumerate(rows):
        if visible is not None and visible.strip() and str(i) not in [v.strip() for v in visible.split(",")]:
            continue
        parts = [p.strip() for p in row.split(",")]
        if len(parts) < 3:
            continue
        try:
            total += int(float(parts[1])) * MiB
            free += int(float(parts[2])) * MiB
        except ValueError:
            continue
        names.append(parts[0])
    if not names:
        return None
    return DeviceMemory(
        "cuda", names[0] if len(set(names)) == 1 else " + ".join(names), total, free, len(names)
    )


def rocm_devices() -> DeviceMemory | None:
    out = _run(["rocm-smi", "--showmeminfo", "vram", "--showproductname", "--json"])
    if not out:
        return None
    try:
        data = json.loads(out)
    except ValueError:
        return None
    total = used = n = 0
    name = ""
    for card in data.values() if isinstance(data, dict) else ():
        if not isinstance(card, dict):
            continue
        t = card.get("VRAM Total Memory (B)")
        u = card.get("VRAM Total Used Memory (B)")
        if t is None or u is None:
            continue
        total += int(t)
        used += int(u)
        n += 1
        name = name or str(
            card.get("Card Series") or card.get("Card series") or card.get("Card model") or "AMD GPU"
        )
    if not n:
        return None
    return DeviceMemory("rocm", name, total, total - used, n)


def gpu_devices() -> DeviceMemory | None:
    """Free memory of the GPUs llama.cpp would use, or None when it cannot be queried."""
    return nvidia_devices() or rocm_devices()


def host_memory(meminfo: str = "/proc/meminfo") -> tuple[int, int]:
    """(MemTotal, MemAvailable) in bytes; (0, 0) when unknown."""
    try:
        text = Path(meminfo).read_text()
    except OSError:
        return 0, 0
    vals: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"(\w+):\s+(\d+)\s*kB", line)
        if m:
            vals[m.group(1)] = int(m.group(2)) * 1024
    return vals.get("MemTotal", 0), vals.get("MemAvailable", vals.get("MemFree", 0))


# ---- what a model needs ------------------------------------------------------------------
