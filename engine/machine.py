"""What a load knows of this machine: the weight layout, threads and flash attention it runs with
(configured, calibrated once per model and machine, or defaults), and what it measures once and keeps
in the profile (the verify-cost curve, a draft model's cost a token, the memory bandwidth behind the
displayed ceiling)."""

from __future__ import annotations

from engine import backend
from engine.calibrate import Choice, calibrate, calibrated
from engine.config import EngineConfig, resolve_flash_attn
from engine.costs import stream_bandwidth_gbs, token_cost, verify_curve
from engine.draftload import draft_id
from engine.profile import CURVE_VERSION, calibration_path
from engine.types import Progress


def load_choice(cfg: EngineConfig, build: str, say: Progress) -> Choice:
    """Weight layout, threads and flash attention: the config's, the calibrated (calibrating now, in
    child processes, when this model and llama.cpp build have none) or the defaults."""
    gpu = cfg.gpu_layers != 0 and backend.gpu_offload_supported()
    default = Choice(backend.cpu_extra_buffers(cfg.cpu_extra_buffers, gpu=gpu),
                     resolve_flash_attn(cfg.flash_attn, gpu=gpu, kv_type=cfg.kv_type), cfg.threads, "default")
    if gpu:
        return default
    if cfg.cpu_extra_buffers is not None and cfg.flash_attn is not None and cfg.threads:
        return Choice(cfg.cpu_extra_buffers, cfg.flash_attn, cfg.threads, "config")
    path = calibration_path(cfg.cache_dir, cfg.model_path, build)
    if not cfg.calibrate or path is None:
        return default
    found = calibrated(path, cfg)
    if found is None:
        say("calibrating weight layout, threads and flash attention (once per model and machine)", 0.07)
        found = calibrate(path, cfg)
    return found or default


def measure_missing(prof: dict, cfg: EngineConfig, ctx, draft_ctx, model, fa_key: str, *, stale: bool, gpu: bool,
                    say: Progress) -> tuple[bool, float]:
    """Measure into ``prof`` what it lacks, or holds for another layout, curve version or draft model
    (``stale``: saved for another flash-attention or weight layout). ctx, draft_ctx: engine.backend
    contexts (the draft's may be None); model: the target's engine.backend.Model. Returns (whether
    ``prof`` changed, the memory bandwidth in GB/s: the config's, the saved or the measured; 0 on a GPU
    unless configured)."""
    dirty = False
    if "verify_curve" not in prof or prof.get("curve_version") != CURVE_VERSION or stale:
        say("measuring the verify-cost curve (once per model and machine)", 0.7)
        prof["verify_curve"] = {str(k): v for k, v in verify_curve(ctx, model.n_vocab).items()}
        prof["curve_version"] = CURVE_VERSION
        prof["flash_attn"] = fa_key
        prof["layout"] = model.layout
        dirty = True
    if draft_ctx is not None and ("draft_token_s" not in prof or prof.get("draft_model") != draft_id(cfg)):
        prof["draft_token_s"] = token_cost(draft_ctx, model.n_vocab)
        prof["draft_model"] = draft_id(cfg)  # the cost is this draft model's
        dirty = True
    bw = float(cfg.memory_bandwidth_gbs or prof.get("stream_bandwidth_gbs", 0.0))
    if not bw and not gpu:
        bw = stream_bandwidth_gbs(threads=ctx.threads)
        prof["stream_bandwidth_gbs"] = bw
        dirty = True
    return dirty, bw
