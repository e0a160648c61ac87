"""A draft model is loaded only where it could pay on the machine's measured costs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from engine.config import EngineConfig
from engine.draftload import draft_id, draft_pays
from engine.local import LocalEngine
from engine.policy import CostCurve, can_pay
from engine.profile import CURVE_VERSION

# a 2-core CPU's verify pass costs about what its rows do (measured: 45 ms a row, 0.43 s for 16)
CPU_CURVE = {1: 0.045, 2: 0.089, 4: 0.147, 8: 0.30, 16: 0.43, 32: 0.70, 64: 1.23}
# a GPU's costs little more than one row
GPU_CURVE = {1: 0.002, 2: 0.0021, 4: 0.0022, 8: 0.0024, 16: 0.0027, 32: 0.0035, 64: 0.005}


def test_a_drafter_pays_only_where_drafting_and_verifying_cost_less_than_the_steps_saved() -> None:
    assert not can_pay(CostCurve(CPU_CURVE), 0.021, 64)  # the 0.5B drafter on the 2-core CPU
    assert can_pay(CostCurve(GPU_CURVE), 0.0005, 64)
    assert not can_pay(CostCurve(GPU_CURVE), 0.004, 64)  # a drafted token dearer than two steps
    # free drafts pay there only near-certain (a copy): at 90% a window's tokens level off at 10
    assert not can_pay(CostCurve(CPU_CURVE), 0.0, 64) and can_pay(CostCurve(CPU_CURVE), 0.0, 64, rate=0.99)


def _profile(curve: dict[int, float], cost: float, cfg: EngineConfig) -> dict:
    return {"verify_curve": {str(k): v for k, v in curve.items()}, "curve_version": CURVE_VERSION,
            "draft_token_s": cost, "draft_model": draft_id(cfg)}


def test_the_draft_model_is_skipped_only_on_auto_with_a_profile_of_this_draft_that_rules_it_out(tmp_path: Path) -> None:
    draft = tmp_path / "draft.gguf"
    draft.write_bytes(b"x" * 10)
    cfg = EngineConfig(model_path=str(tmp_path / "t.gguf"), draft_model_path=str(draft), calibrate=True)
    cpu = _profile(CPU_CURVE, 0.021, cfg)
    assert not draft_pays(cfg, cpu)
    assert draft_pays(cfg, _profile(GPU_CURVE, 0.0005, cfg))
    assert draft_pays(replace(cfg, draft_always=True), cpu)  # a bench of the draft configuration
    assert draft_pays(replace(cfg, spec="draft"), cpu)  # asked for by name
    assert draft_pays(replace(cfg, calibrate=False), cpu)  # nothing is measured: as configured
    assert draft_pays(cfg, {**cpu, "curve_version": -1})  # a curve of another version is not evidence
    assert draft_pays(cfg, {k: v for k, v in cpu.items() if k != "draft_token_s"})  # not measured yet
    draft.write_bytes(b"x" * 11)  # another draft model at the same path: its cost is unknown
    assert draft_pays(cfg, cpu)


def test_a_load_after_the_profile_rules_the_draft_out_leaves_it_unloaded(tmp_path: Path) -> None:
    from tests.engine.tinymodel import write_tiny_model

    model = str(write_tiny_model(tmp_path / "tiny-bytes.gguf", vocab=300, byte_fallback=True))
    # layout, flash attention and threads given: calibrated mode without a calibration run
    cfg = EngineConfig(model_path=model, draft_model_path=model, n_ctx=256, threads=1, cpu_extra_buffers=False,
                       flash_attn=False, cache_dir=str(tmp_path), log_path=str(tmp_path / "llama.log"), calibrate=True)
    eng = LocalEngine.load(cfg)
    try:
        assert eng.draft_ctx is not None and eng.draft_note == ""  # first load: measures what it costs
        path = eng.profile_file
    finally:
        eng.close()
    assert path is not None
    prof = json.loads(path.read_text())
    assert prof["draft_model"] == draft_id(cfg) and prof["draft_token_s"] > 0
    step = CostCurve({int(k): float(v) for k, v in prof["verify_curve"].items()}).cost(1)
    prof["draft_token_s"] = 10 * step  # a drafter ten steps a token cannot pay on any curve
    path.write_text(json.dumps(prof))
    eng = LocalEngine.load(cfg)
    try:
        assert eng.draft_ctx is None and eng.draft_drafter is None and "draft" not in eng.speculator.slots
        assert eng.info.draft_name is None and "cannot pay" in eng.draft_note
        assert eng.call(lambda: eng.next_token_gap(eng.tokenize("hello"))) >= 0.0  # the engine still runs
    finally:
        eng.close()
    eng = LocalEngine.load(replace(cfg, draft_always=True))
    try:
        assert eng.draft_ctx is not None and "draft" in eng.speculator.slots
    finally:
        eng.close()
