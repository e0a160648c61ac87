"""The engine's own settings (the app maps its Config onto this)."""

from __future__ import annotations

from dataclasses import dataclass

# switches of tau's patched llama.cpp build (engine/lab/gpu/graphkey.patch, CUDA graphs kept per batch
# shape); engine.backend turns them on for tau's process, and inert in an unpatched build
TAU_LLAMA_ENV = {"GGML_CUDA_GRAPH_KEY_BY_ROWS": "1"}


def layout_name(extra_buffers: bool, amx: bool) -> str:
    """The CPU weight layout: plain, repacked (llama.cpp's extra buffer types, AMX first) or repacked-noamx."""
    return "plain" if not extra_buffers else ("repacked" if amx else "repacked-noamx")


@dataclass(frozen=True)
class EngineConfig:
    model_path: str
    draft_model_path: str | None = None
    n_ctx: int = 16384
    n_batch: int = 512
    threads: int = 0  # 0 = all cores
    gpu_layers: int = -1
    flash_attn: bool | None = None
    cpu_extra_buffers: bool | None = None  # None = calibrated (engine.calibrate), else off on CPU
    kv_type: str = "f16"  # target KV type; the drafter's KV cache is always f16
    spec: str = "auto"  # off | ngram | draft | mtp | auto
    draft_always: bool = False  # load the draft model even where the machine profile says it cannot pay
    ngram_key: int = 0  # 0 = default
    max_window: int = 0  # 0 = default
    memory_bandwidth_gbs: float = 0.0  # 0 = measure once and cache
    cache_dir: str = ""  # where measured curves / bandwidth are cached ("" = no cache)
    log_path: str = ""  # llama.cpp's log goes here ("" = discarded)
    prefix_cache: bool = True  # save/load the KV state of prompt prefixes under cache_dir/prefix
    calibrate: bool = False  # measure weight layout, threads and flash attention left on auto (needs cache_dir)
    side_prefill: bool | None = None  # long prompt additions on the other CPU layout: None = where calibrated faster
    side_verify: bool | None = None  # wide verify passes there too (needs the side context): None = where measured cheaper
    # verify passes padded up to these rows: None = engine.widths.GPU_PASS_WIDTHS on a GPU, none on a CPU
    pass_widths: tuple[int, ...] | None = None
    # plain steps started before the policy's pick, which then runs while the device computes:
    # None = on a GPU (a CPU computes inside llama_decode: nothing to overlap)
    overlap_pick: bool | None = None
    # threads that prepare a verify pass's rows on the host: None or 0 = none (engine.rowpool)
    verify_threads: int | None = None


def resolve_flash_attn(flash_attn: bool | None, *, gpu: bool, kv_type: str) -> bool | None:
    """The flash-attention setting a context is created with (None = llama.cpp's auto).

    An explicit choice wins. A quantized V cache needs flash attention. On CPU it is off
    (llama.cpp's CPU kernel made 16-row verify passes slower on a 2-core Xeon) unless
    engine.calibrate measured otherwise. On GPUs llama.cpp decides.
    """
    if flash_attn is not None:
        return flash_attn
    if kv_type not in ("f16", "f32", "bf16"):
        return True
    return None if gpu else False
