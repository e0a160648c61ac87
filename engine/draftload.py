"""Whether a configured draft model is worth loading on this machine (engine.local asks at load)."""

from __future__ import annotations

from engine import backend
from engine.calibrate import Choice
from engine.config import EngineConfig, resolve_flash_attn
from engine.policy import CostCurve, can_pay
from engine.profile import CURVE_VERSION, model_id
from engine.spec import DEFAULT_MAX_WINDOW


def draft_pays(cfg: EngineConfig, prof: dict) -> bool:
    """Whether the draft model is worth loading: unless a saved profile (the verify curve and the
    draft's cost a token, measured at an earlier load) shows that it would not beat plain decoding
    even at 90% acceptance, when speculation is on auto and settings are calibrated. On a 2-core
    CPU a verify pass costs about what its rows do and a drafted token 40% of a step: the model
    and its cache cost seconds of every load and never drafted."""
    if cfg.draft_always or not cfg.calibrate or cfg.spec != "auto":
        return True
    cost, points = prof.get("draft_token_s"), prof.get("verify_curve")
    if not cost or not points or prof.get("curve_version") != CURVE_VERSION or prof.get("draft_model") != draft_id(cfg):
        return True
    curve = CostCurve({int(k): float(v) for k, v in points.items()})
    return can_pay(curve, float(cost), cfg.max_window or DEFAULT_MAX_WINDOW)


def draft_id(cfg: EngineConfig) -> str:
    return model_id(cfg.draft_model_path) if cfg.draft_model_path else ""


def load_draft(cfg: EngineConfig, ctx: backend.Context, choice: Choice, flash_attn: bool | None, *,
               gpu: bool) -> tuple[backend.Model, backend.Context]:
    """The draft model and its context beside the target's ``ctx``: the same context length, layout
    and threads, and its KV in f16 whatever the target's (quantized KV collapses acceptance)."""
    model = backend.Model(cfg.draft_model_path or "", gpu_layers=cfg.gpu_layers, extra_buffers=choice.extra_buffers,
                          amx=choice.amx)
    fa = flash_attn if cfg.kv_type == "f16" else resolve_flash_attn(cfg.flash_attn, gpu=gpu, kv_type="f16")
    return model, backend.Context(model, n_ctx=ctx.n_ctx, n_batch=cfg.n_batch, threads=choice.threads, kv_type="f16",
                                  flash_attn=fa)
