"""The engine's own settings (the app maps its Config onto this)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineConfig:
    model_path: str
    draft_model_path: str | None = None
    n_ctx: int = 16384
    n_batch: int = 512
    threads: int = 0  # 0 = all cores
    gpu_layers: int = -1
    flash_attn: bool | None = None
    kv_type: str = "f16"  # target KV type; the drafter's KV cache is always f16
    spec: str = "auto"  # off | ngram | draft | mtp | auto
    ngram_key: int = 0  # 0 = default
    max_window: int = 0  # 0 = default
    memory_bandwidth_gbs: float = 0.0  # 0 = measure once and cache
    cache_dir: str = ""  # where measured curves / bandwidth are cached ("" = no cache)
    log_path: str = ""  # llama.cpp's log goes here ("" = discarded)
