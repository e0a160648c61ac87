"""The real LocalEngine with a GPU user's settings, for the synthetic bench."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from engine.config import EngineConfig
from engine.devices import GiB
from engine.lab.gpu.synthetic_device import _used_mib
from engine.lab.gpu.synthetic_loops import PROMPT_TOKENS, _pick_prompt
from engine.memfit import check_fit
from engine.types import GenerateRequest, SamplingParams


def local_engine_check(
    model_path: str, draft_path: str, out: Path, *, n_ctx: int, gpu_layers: int, tokens: int
) -> dict[str, Any]:
    """The real ``LocalEngine`` with a GPU user's settings: target KV q8_0 with flash attention,
    a draft model (whose KV cache the engine keeps f16), all layers offloaded; the fit check's
    estimate for exactly that against the device memory it really took."""
    from engine.local import LocalEngine
    from engine.types import DoneEvent

    cfg = EngineConfig(
        model_path=model_path,
        draft_model_path=draft_path,
        n_ctx=n_ctx,
        gpu_layers=gpu_layers,
        flash_attn=True,
        kv_type="q8_0",
        cache_dir=str(out / "cache"),
        log_path=str(out / "llama.log"),
    )
    rep = check_fit(cfg, raise_error=False)
    used0 = _used_mib()
    t0 = time.perf_counter()
    eng = LocalEngine.load(cfg)
    info: dict[str, Any] = {
        "load_s": round(time.perf_counter() - t0, 2),
        "backend": eng.info.backend,
        "fit_need_device_gib": round(rep.need_device / GiB, 3),
        "fits": rep.fits,
    }
    used1 = _used_mib()
    if used0 is not None and used1 is not None:
        info["device_used_gib"] = round((used1 - used0) / 1024, 3)
    try:
        prompt = tuple(_pick_prompt(eng.model, PROMPT_TOKENS, 0))
        for spec in ("off", "draft", "auto"):
            req = GenerateRequest(
                prompt=prompt, max_tokens=tokens, sampling=SamplingParams(temperature=0.0), spec=spec
            )
            done = None
            for ev in eng.stream(req):
                if isinstance(ev, DoneEvent):
                    done = ev
            assert done is not None
            st = done.stats
            info[f"spec_{spec}"] = {
                "finish": done.finish_reason,
                "error": done.error,
                "tokens": st.completion_tokens,
                "decode_tok_s": round(st.decode_tok_s, 2),
                "tau": round(st.tau, 3),
                "drafted": st.drafted,
                "accepted": st.accepted,
            }
    finally:
        eng.close()
    return info
