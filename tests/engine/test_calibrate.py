"""engine.calibrate: the load settings measured per machine in child processes, cached, and used."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from engine.calibrate import Candidate, calibrate, calibrated, candidates, describe, pick
from engine.config import EngineConfig


def test_candidates_keep_what_the_config_sets() -> None:
    cs = candidates(EngineConfig(model_path="m", cpu_extra_buffers=False, threads=3), 8)
    assert {c.extra_buffers for c in cs} == {False} and {c.threads for c in cs} == {3}
    assert {c.flash_attn for c in cs} == {False, True}
    q = candidates(EngineConfig(model_path="m", kv_type="q8_0"), 2)  # a quantized V cache needs flash attention
    assert {c.flash_attn for c in q} == {True} and {c.threads for c in q} == {2}
    assert {c.extra_buffers for c in q} == {False, True}
    assert {c.threads for c in candidates(EngineConfig(model_path="m"), 8)} == {8, 4}


def test_the_choice_minimises_a_plain_step_plus_a_verify_pass() -> None:
    a, b = Candidate(False, False, 2), Candidate(True, False, 2)
    assert pick([(a, 0.030, 0.090), (b, 0.025, 0.100)]) == (a, 0.030, 0.090)  # 120 ms against 125 ms
    assert pick([(a, 0.030, 0.090), (b, 0.020, 0.080)]) == (b, 0.020, 0.080)
    assert pick([]) is None


def test_a_layout_whose_child_crashes_is_ruled_out_and_the_choice_is_cached(tmp_path) -> None:
    def runner(cmd, timeout):  # the repacked layout's child dies of SIGILL after its first candidate
        spec = json.loads(cmd[-1])
        lines = [json.dumps({"candidate": c, "step_s": 0.01 if c["extra_buffers"] else 0.03, "verify_s": 0.05})
                 for c in spec["candidates"]]
        return (-4, lines[0]) if spec["candidates"][0]["extra_buffers"] else (0, "\n".join(lines))

    cfg = EngineConfig(model_path=str(tmp_path / "m.gguf"), threads=2, cache_dir=str(tmp_path))
    path = tmp_path / "cal.json"
    c = calibrate(path, cfg, runner=runner)
    assert c is not None and c.extra_buffers is False and c.ruled_out == ("extra_buffers on: signal 4",)
    assert calibrated(path, cfg) == c
    assert calibrated(path, replace(cfg, cpu_extra_buffers=True)) is None  # a pinned layout it did not choose
    assert calibrated(path, replace(cfg, threads=1)) is None


def test_a_real_child_calibrates_a_tiny_model_and_the_engine_loads_with_it(tmp_path, monkeypatch) -> None:
    from engine.local import LocalEngine
    from tests.engine.tinymodel import write_tiny_model

    model = str(write_tiny_model(tmp_path / "tiny.gguf", vocab=300, byte_fallback=True))
    cfg = EngineConfig(model_path=model, n_ctx=256, threads=1, cache_dir=str(tmp_path), calibrate=True)
    eng = LocalEngine.load(cfg)
    try:
        ch = eng.choice
        assert ch.source == "calibrated" and ch.step_s > 0 and ch.verify_s > 0 and not ch.ruled_out
        assert eng.model.extra_buffers == ch.extra_buffers and eng.flash_attn == ch.flash_attn and eng.ctx.threads == 1
    finally:
        eng.close()
    assert describe(str(tmp_path), model, cfg) == ch  # what `tau models` shows
    monkeypatch.setattr("engine.local.calibrate", lambda *a, **k: pytest.fail("calibrated a second time"))
    again = LocalEngine.load(cfg)  # the cached choice
    try:
        assert again.choice == ch
    finally:
        again.close()


def test_tau_models_calibrates_on_request_and_shows_the_choice(tmp_path, monkeypatch, capsys) -> None:
    from app.cli.main import main
    from tests.engine.tinymodel import write_tiny_model

    model = str(write_tiny_model(tmp_path / "tiny.gguf", vocab=300, byte_fallback=True))
    monkeypatch.setenv("TAU_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["models", "--model", model, "--draft-model", "none", "--threads", "1", "--json"]) == 0
    assert "not calibrated yet" in json.loads(capsys.readouterr().out)["calibration"]["status"]
    assert main(["models", "--model", model, "--draft-model", "none", "--threads", "1", "--json", "--calibrate"]) == 0
    cal = json.loads(capsys.readouterr().out)["calibration"]
    assert "(calibrated)" in cal["status"]
    assert cal["threads"] == 1 and isinstance(cal["extra_buffers"], bool) and cal["step_ms"] > 0
