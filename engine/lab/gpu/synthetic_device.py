"""The device a synthetic bench runs on: its name, memory and bandwidth (datasheet or measured)."""

# ruff: noqa: I001  (engine.backend, which imports llama_cpp, must come before numpy)
from __future__ import annotations

from engine import backend

import os
import platform
from typing import Any

from engine.devices import GiB, gpu_devices, nvidia_devices

# Vendor datasheet memory bandwidth, GB/s (matched by substring of the device name, longest first).
GPU_BANDWIDTH_GBS: dict[str, float] = {
    "H200": 4800,
    "H100 NVL": 3900,
    "H100 PCIe": 2000,
    "H100": 3350,
    "GH200": 4000,
    "B200": 8000,
    "A100-SXM4-80GB": 2039,
    "A100 80GB PCIe": 1935,
    "A100-PCIE-80GB": 1935,
    "A100": 1555,
    "L40S": 864,
    "L40": 864,
    "L4": 300,
    "A10G": 600,
    "A10": 600,
    "A40": 696,
    "A6000": 768,
    "RTX 6000 Ada": 960,
    "RTX 5090": 1792,
    "RTX 5080": 960,
    "RTX 4090": 1008,
    "RTX 4080 SUPER": 736,
    "RTX 4080": 717,
    "RTX 4070 Ti SUPER": 672,
    "RTX 4070 Ti": 504,
    "RTX 4060 Ti": 288,
    "RTX 3090 Ti": 1008,
    "RTX 3090": 936,
    "RTX 3080 Ti": 912,
    "RTX 3080": 760,
    "V100": 900,
    "T4": 320,
    "MI300X": 5300,
    "MI325X": 6000,
    "MI250X": 3277,
    "MI250": 3277,
    "MI210": 1638,
    "7900 XTX": 960,
    "7900 XT": 800,
    "W7900": 864,
}


def bandwidth_for(name: str) -> float:
    for key in sorted(GPU_BANDWIDTH_GBS, key=len, reverse=True):
        if key.lower() in name.lower():
            return GPU_BANDWIDTH_GBS[key]
    return 0.0


def device_info() -> dict[str, Any]:
    gpu = backend.gpu_offload_supported()
    dev = gpu_devices() if gpu else None
    info: dict[str, Any] = {
        "gpu_offload": gpu,
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "system_info": backend.system_info().strip(),
    }
    if dev is not None:
        info.update(
            kind=dev.kind,
            name=dev.name,
            count=dev.count,
            total_gib=round(dev.total / GiB, 1),
            free_gib=round(dev.free / GiB, 1),
        )
        info["bandwidth_gbs"] = bandwidth_for(dev.name) * dev.count
        info["bandwidth_source"] = "datasheet" if info["bandwidth_gbs"] else "unknown"
    else:
        from engine.costs import stream_bandwidth_gbs as memory_bandwidth_gbs

        info.update(kind="cpu", name=platform.processor() or platform.machine())
        info["bandwidth_gbs"] = round(memory_bandwidth_gbs(), 1)
        info["bandwidth_source"] = "measured copy (host memory)"
    return info


def _used_mib() -> int | None:
    d = nvidia_devices()
    return None if d is None else int((d.total - d.free) / (1 << 20))
