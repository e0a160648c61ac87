"""engine.calibrate: the load settings measured per machine in child processes, cached, and used."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from engine.calibrate import Candidate, Timing, calibrate, calibrated, candidates, describe, pick, side_for
from engine.config import EngineConfig


@pytest.fixture(autouse=True)
def _no_amx(monkeypatch) -> None:
    """The layouts on offer must not depend on the machine the tests run on (a test below sets AMX)."""
    monkeypatch.setattr("engine.repack_backend.amx_present", lambda: False)


def test_candidates_keep_what_the_config_sets() -> None:
    cs = candidates(EngineConfig(model_path="m", cpu_extra_buffers=False, threads=3), 8)
    assert {c.extra_buffers for c in cs} == {False} and {c.threads for c in cs} == {3}
    assert {c.flash_attn for c in cs} == {False, True}
    q = candidates(EngineConfig(model_path="m", kv_type="q8_0"), 2)  # a quantized V cache needs flash attention
    assert {c.flash_attn for c in q} == {True} and {c.threads for c in q} == {2}
    assert {c.extra_buffers for c in q} == {False, True}
    assert {c.threads for c in candidates(EngineConfig(model_path="m"), 8)} == {8, 4}


def test_the_choice_minimises_a_representative_request() -> None:
    a, b = Candidate(False, False, 2), Candidate(True, False, 2)
    # a request takes many more single steps than verify passes: 5 ms a step outweighs 10 ms a pass
    assert pick([Timing(a, 0.030, 0.090), Timing(b, 0.025, 0.100)]) == Timing(b, 0.025, 0.100)
    assert pick([Timing(a, 0.030, 0.090), Timing(b, 0.029, 0.120)]) == Timing(a, 0.030, 0.090)
    # the Xeon with AMX, repacked weights: flash attention's cheaper steps and prefill beat its dearer passes
    off, on = Candidate(True, False, 2), Candidate(True, True, 2)
    fa_off, fa_on = Timing(off, 0.0815, 0.2335, prefill_s=1 / 103), Timing(on, 0.0766, 0.2445, prefill_s=1 / 126)
    assert pick([fa_off, fa_on]) == fa_on
    assert pick([fa_off, replace(fa_on, prefill_s=1 / 90)]) == fa_off  # the steps alone do not pay for its prefill
    assert pick([]) is None


def test_a_side_layouts_prefill_counts_for_the_layout_it_serves() -> None:
    rep, plain = Candidate(True, True, 2), Candidate(False, True, 2)
    slow_prefill = Timing(rep, 0.036, 0.24, prefill_s=1 / 60, copy_s=15e-6)
    fast_prefill = Timing(plain, 0.044, 0.26, prefill_s=1 / 130, copy_s=15e-6)
    assert pick([fast_prefill, slow_prefill]) == slow_prefill  # its long prompts go to the plain layout
    no_copy = replace(fast_prefill, copy_s=0.0)  # its state copy failed: no side, each prefills its own
    assert pick([no_copy, slow_prefill]) == no_copy


def test_long_prompts_go_to_the_other_layout_only_where_it_prefills_enough_faster() -> None:
    rep, plain = Candidate(True, True, 2), Candidate(False, True, 2)
    best = Timing(rep, 0.038, 0.25, prefill_s=1 / 85, copy_s=15e-6)
    faster = Timing(plain, 0.049, 0.35, prefill_s=1 / 126, copy_s=15e-6)
    assert side_for(best, [faster, best]) == faster
    assert side_for(best, [replace(faster, prefill_s=1 / 90)]) is None  # 6% is within a CPU's wander
    assert side_for(best, [replace(faster, candidate=Candidate(False, False, 2))]) is None  # other KV layout
    assert side_for(best, [replace(faster, candidate=Candidate(False, True, 1))]) is None
    assert side_for(best, [replace(faster, copy_s=0.0)]) is None  # its state copy failed


def test_the_calibrated_choice_keeps_the_side_layout_and_shows_it(tmp_path) -> None:
    def runner(cmd, timeout):  # the repacked layout decodes faster, the plain one prefills faster
        spec = json.loads(cmd[-1])
        rep = spec["candidates"][0]["extra_buffers"]
        return 0, "\n".join(json.dumps({"candidate": c, "step_s": 0.038 if rep else 0.049, "verify_s": 0.25 if rep else 0.35,
                                         "prefill_s": 1 / 85 if rep else 1 / 126, "copy_s": 15e-6})
                            for c in spec["candidates"])

    cfg = EngineConfig(model_path=str(tmp_path / "m.gguf"), threads=2, cache_dir=str(tmp_path))
    c = calibrate(tmp_path / "cal.json", cfg, runner=runner)
    assert c is not None and c.extra_buffers is True
    assert c.side_prefill_s == pytest.approx(1 / 126) and c.prefill_s == pytest.approx(1 / 85)
    assert calibrated(tmp_path / "cal.json", cfg) == c
    assert "long prompts prefilled on plain weights (126 tok/s against 85)" in c.label()


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


def test_tau_models_shows_this_builds_choice_before_a_newer_one_of_another_build(tmp_path) -> None:
    import os

    from engine.profile import calibration_path

    def runner_for(repacked_wins: bool):
        def runner(cmd, timeout):
            spec = json.loads(cmd[-1])
            rep = spec["candidates"][0]["extra_buffers"]
            return 0, "\n".join(json.dumps({"candidate": c, "step_s": 0.03 if rep == repacked_wins else 0.05,
                                             "verify_s": 0.2 if rep == repacked_wins else 0.3})
                                 for c in spec["candidates"])
        return runner

    cfg = EngineConfig(model_path=str(tmp_path / "m.gguf"), threads=2, cache_dir=str(tmp_path))
    (tmp_path / "profiles").mkdir()
    ours = calibration_path(str(tmp_path), cfg.model_path, "llama0.3.36-aaaa")
    theirs = calibration_path(str(tmp_path), cfg.model_path, "llama0.3.36-bbbb")  # say, a CI clone's venv
    mine = calibrate(ours, cfg, runner=runner_for(True))
    other = calibrate(theirs, cfg, runner=runner_for(False))
    assert mine is not None and other is not None and mine.extra_buffers and not other.extra_buffers
    os.utime(ours, (1, 1))  # the other build's file is the newer one
    assert describe(str(tmp_path), cfg.model_path, cfg, build="llama0.3.36-aaaa") == (mine, True)
    assert describe(str(tmp_path), cfg.model_path, cfg, build="llama0.3.36-cccc") == (other, False)  # none of its own


def test_where_amx_crashes_repacking_without_it_is_measured_and_can_win(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("engine.repack_backend.amx_present", lambda: True)
    starts: list[str] = []

    def runner(cmd, timeout):  # AMX's child dies of SIGILL; without AMX the repacked layout steps and verifies
        spec = json.loads(cmd[-1])  # fastest, the plain one prefills fastest
        c0 = spec["candidates"][0]
        starts.append(Candidate(**c0).layout)
        if c0["extra_buffers"] and c0["amx"]:
            return -4, ""
        rep = c0["extra_buffers"]
        return 0, "\n".join(json.dumps({"candidate": c, "step_s": 0.070 if rep else 0.073, "verify_s": 0.22 if rep else 0.26,
                                          "prefill_s": 1 / 110 if rep else 1 / 160, "copy_s": 15e-6})
                             for c in spec["candidates"])

    cfg = EngineConfig(model_path=str(tmp_path / "m.gguf"), threads=2, cache_dir=str(tmp_path))
    path = tmp_path / "cal.json"
    c = calibrate(path, cfg, runner=runner)
    assert starts == ["plain", "repacked", "repacked-noamx"]  # one child per layout
    assert c is not None and c.layout == "repacked-noamx" and c.side_layout == "plain"
    assert c.ruled_out == ("extra_buffers on: signal 4",) and c.side_prefill_s == pytest.approx(1 / 160)
    assert calibrated(path, cfg) == c
    assert "weights repacked without AMX" in c.label() and "prefilled on plain weights (160 tok/s" in c.label()
    monkeypatch.setattr("engine.repack_backend.amx_present", lambda: False)
    assert calibrated(path, cfg) is None  # a build or machine without AMX: that layout is not on offer
    assert {c.layout for c in candidates(cfg, 2)} == {"plain", "repacked"}


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
    assert describe(str(tmp_path), model, cfg) == (ch, True)  # what `tau models` shows
    monkeypatch.setattr("engine.machine.calibrate", lambda *a, **k: pytest.fail("calibrated a second time"))
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


def test_tau_models_calibrate_assembles_the_default_pack_first(tmp_path, monkeypatch, capsys) -> None:
    """On a fresh machine the pack is installed but not assembled; --calibrate must not refuse it."""
    import hashlib
    import sys

    from app.cli.main import main
    from engine import modelpack
    from tests.engine.tinymodel import write_tiny_model

    whole = write_tiny_model(tmp_path / "tiny.gguf", vocab=300, byte_fallback=True).read_bytes()
    prefix = f"calpack_{tmp_path.name.replace('-', '_')}_part"
    cut = len(whole) // 2
    for i, chunk in enumerate((whole[:cut], whole[cut:]), start=1):
        (tmp_path / "site" / f"{prefix}{i}" / "data").mkdir(parents=True)
        (tmp_path / "site" / f"{prefix}{i}" / "__init__.py").write_text("")
        (tmp_path / "site" / f"{prefix}{i}" / "data" / f"part{i:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("TAU_CACHE_DIR", str(tmp_path / "cache"))
    pack = modelpack.PackModel("target", "tiny-pack.gguf", prefix, 2, len(whole), hashlib.sha256(whole).hexdigest(),
                               "tiny pack")
    monkeypatch.setattr(modelpack, "TARGET", pack)
    try:
        assert not modelpack.is_ready(pack)
        assert main(["models", "--draft-model", "none", "--threads", "1", "--json", "--calibrate"]) == 0
        cal = json.loads(capsys.readouterr().out)["calibration"]
        assert modelpack.is_ready(pack) and "(calibrated)" in cal["status"]
    finally:
        for i in (1, 2):
            sys.modules.pop(f"{prefix}{i}", None)


def test_the_child_times_steps_and_passes_at_an_edits_context_length(monkeypatch) -> None:
    """Flash attention's cost grows with the context: timed in a near-empty one it looked cheaper
    on a CPU where, at an edit's 1-2k tokens, it made every verify pass dearer."""
    import engine.backend
    from engine import calibrate as cal

    timed: list[tuple[int, int, bool]] = []  # (position, rows, all_logits) of every pass

    class Ctx:
        def __init__(self, model, *, n_ctx, n_batch, threads, flash_attn) -> None:
            self.n_ctx, self.kv = n_ctx, 0

        def decode(self, tokens, pos0, *, all_logits):
            assert pos0 == self.kv and pos0 + len(tokens) <= self.n_ctx
            timed.append((pos0, len(tokens), all_logits))
            self.kv = pos0 + len(tokens)

        def truncate(self, pos):
            self.kv = min(self.kv, pos)

        def copy_seq_to(self, other):
            return True

        def close(self):
            pass

    class Model:
        n_vocab = 300

    monkeypatch.setattr(engine.backend, "Context", Ctx)
    step, verify, prefill, copy = cal._time_candidate(Model(), Candidate(True, False, 2), 2048)
    steps = [p for p, n, al in timed if n == 1]
    passes = [p for p, n, al in timed if n == cal.VERIFY_ROWS and al]
    assert len(steps) == cal.STEPS and len(passes) >= 2
    assert min(steps + passes) >= 1000  # an edit's context, not the 64 tokens timed before
    assert cal.VERIFY_ROWS >= 16
    assert min(step, verify, prefill, copy) > 0


def test_tau_models_names_the_fix_where_amx_died_of_the_tile_header(tmp_path, monkeypatch, capsys) -> None:
    from app.cli.main import main
    from engine.lab import amxbuild
    from tests.engine.tinymodel import write_tiny_model

    model = str(write_tiny_model(tmp_path / "tiny.gguf", vocab=300, byte_fallback=True))
    monkeypatch.setenv("TAU_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("engine.repack_backend.amx_present", lambda: True)

    def runner(cmd, timeout):  # llama.cpp's AMX child dies of SIGILL, as GCC 12's header makes it
        spec = json.loads(cmd[-1])
        if spec["candidates"][0]["extra_buffers"] and spec["candidates"][0]["amx"]:
            return -4, ""
        return 0, "\n".join(json.dumps({"candidate": c, "step_s": 0.07, "verify_s": 0.3}) for c in spec["candidates"])

    from engine import backend
    from engine.profile import calibration_path

    cache = str(tmp_path / "cache")
    cfg = EngineConfig(model_path=model, threads=1, cache_dir=cache)
    c = calibrate(calibration_path(cache, model, backend.build_id()), cfg, runner=runner)  # as --calibrate stores it
    assert c is not None and "extra_buffers on: signal 4" in c.ruled_out
    args = ["models", "--model", model, "--draft-model", "none", "--threads", "1"]
    for narrow in (True, False):
        monkeypatch.setattr(amxbuild, "check", lambda cxx=None, n=narrow: amxbuild.HeaderCheck("/x.h", n))
        assert main(args) == 0
        out = capsys.readouterr().out
        assert ("tau models --rebuild-amx" in out) is narrow
