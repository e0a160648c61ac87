"""LocalEngine's streaming contract on a tiny model: one DoneEvent, cancellation, abandonment."""

from __future__ import annotations

from engine.types import CancelToken, DoneEvent, GenerateRequest, SamplingParams, TokenEvent, generate


def test_stream_ends_with_one_done_and_text_matches(tiny_engine) -> None:
    events = list(tiny_engine.stream(GenerateRequest("a b c", max_tokens=16, sampling=SamplingParams(seed=1))))
    dones = [e for e in events if isinstance(e, DoneEvent)]
    assert len(dones) == 1 and events[-1] is dones[0]
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)) == dones[0].text


def test_stopping_at_done_does_not_cancel_the_callers_token(tiny_engine) -> None:
    token = CancelToken()
    for ev in tiny_engine.stream(GenerateRequest("a b", max_tokens=4), token):
        if isinstance(ev, DoneEvent):
            break
    assert not token.cancelled


def test_abandoned_stream_frees_the_engine(tiny_engine) -> None:
    it = tiny_engine.stream(GenerateRequest("a b c", max_tokens=400, sampling=SamplingParams(temperature=1.0, seed=2)))
    next(it)
    it.close()  # the consumer goes away mid-generation
    done = generate(tiny_engine, GenerateRequest("c b a", max_tokens=3))
    assert done.error is None and done.finish_reason in ("length", "stop")


def test_cancel_token_stops_generation(tiny_engine) -> None:
    token = CancelToken()
    token.cancel()
    done = generate(tiny_engine, GenerateRequest("a b c", max_tokens=200, sampling=SamplingParams(temperature=1.0, seed=3)), token)
    assert done.finish_reason == "cancelled" and len(done.token_ids) <= 2


def test_prompt_longer_than_the_context_is_an_error_not_a_crash(tiny_engine) -> None:
    done = generate(tiny_engine, GenerateRequest("a " * 600, max_tokens=3))
    assert done.finish_reason == "error" and "does not fit" in (done.error or "")
    assert generate(tiny_engine, GenerateRequest("a b", max_tokens=2)).error is None


def test_threads_zero_means_all_cores_never_llama_cpps_default(tmp_path) -> None:
    # llama.cpp reads n_threads 0 as its default of 4: on a 2-core machine that oversubscribed
    # every decode; 0 in tau's config means all cores, and an explicit count wins
    import os

    import pytest

    from engine.backend import BackendError
    from engine.config import EngineConfig
    from engine.local import LocalEngine
    from tests.engine.tinymodel import write_tiny_model

    model = str(write_tiny_model(tmp_path / "tiny.gguf", vocab=300, byte_fallback=True))
    cfg = EngineConfig(model_path=model, draft_model_path=model, n_ctx=256, threads=0, cache_dir=str(tmp_path))
    eng = LocalEngine.load(cfg)
    try:
        assert eng.ctx.threads == os.cpu_count() and eng.draft_ctx.threads == os.cpu_count()
        with pytest.raises(BackendError, match="at least 1"):
            eng.call(lambda: eng.ctx.set_threads(0))
    finally:
        eng.close()
    eng = LocalEngine.load(EngineConfig(model_path=model, n_ctx=256, threads=1, cache_dir=str(tmp_path)))
    try:
        assert eng.ctx.threads == 1
    finally:
        eng.close()


def test_cpu_weights_stay_out_of_extra_buffers_unless_asked(tmp_path) -> None:
    # a native build's AMX kernels died of SIGILL at the first multi-row batch on the Xeon VM
    # tau is developed on: on CPU the weights stay in plain buffers unless configured
    from engine import backend
    from engine.config import EngineConfig
    from engine.local import LocalEngine
    from tests.engine.tinymodel import write_tiny_model

    assert backend.cpu_extra_buffers(None, gpu=False) is False
    assert backend.cpu_extra_buffers(None, gpu=True) is True
    assert backend.cpu_extra_buffers(True, gpu=False) is True
    model = str(write_tiny_model(tmp_path / "tiny.gguf", vocab=300, byte_fallback=True))
    curves, files = [], []
    for choice in (None, True, None):
        eng = LocalEngine.load(EngineConfig(model_path=model, n_ctx=256, gpu_layers=0, cpu_extra_buffers=choice,
                                            cache_dir=str(tmp_path)))
        try:
            assert eng.model.extra_buffers is (choice is True)
            # the profile remembers which weights its verify curve was measured with
            assert eng.profile["layout"] == ("repacked" if choice is True else "plain")
            rows = eng.call(lambda eng=eng: eng.ctx.decode([5, 6, 7, 8], 0, all_logits=True))
            assert rows.shape[0] == 4
            curves.append(eng.profile["verify_curve"])
            files.append(eng.profile_file)
        finally:
            eng.close()
    # each layout keeps its own profile: loading the other one in between re-measured nothing
    assert files[0] == files[2] != files[1] and curves[0] == curves[2]


def test_each_sampling_mode_refines_its_own_copy_of_the_measured_curve(tiny_engine) -> None:
    spec = tiny_engine.speculator
    measured = dict(spec.curve.points)
    for params in (SamplingParams(temperature=0.0), SamplingParams(temperature=0.6, top_p=0.95, seed=4)):
        done = generate(tiny_engine, GenerateRequest("a b c a b c a b", max_tokens=24, sampling=params))
        assert done.error is None
    assert set(spec.curves) == {"greedy", "sampled"}
    assert spec.curve.points == measured  # the measurement itself stays as measured
    assert all(c.points != measured for c in spec.curves.values())  # each learned from its own passes


def test_the_displayed_ceiling_is_never_below_a_measured_plain_decode(tmp_path) -> None:
    # a configured bandwidth far below what the machine moves: the ceiling it implies is beaten by
    # a real plain decode, so the engine raises it to that decode (and remembers it for the next load)
    from engine.config import EngineConfig
    from engine.local import LocalEngine
    from tests.engine.tinymodel import write_tiny_model

    model = str(write_tiny_model(tmp_path / "tiny.gguf", vocab=300, byte_fallback=True))
    cfg = EngineConfig(model_path=model, n_ctx=256, threads=1, cache_dir=str(tmp_path), memory_bandwidth_gbs=1e-9)
    req = GenerateRequest("a b c d", max_tokens=48, spec="off", sampling=SamplingParams(temperature=1.0, seed=4))
    eng = LocalEngine.load(cfg)
    try:
        assert eng.ceiling_tok_s < 1.0  # what the configured figure alone implies
        done = generate(eng, req)
        assert done.stats.completion_tokens >= 8 and sum(done.stats.accepted.values()) == 0
        assert done.stats.ceiling_tok_s >= done.stats.decode_tok_s > 0
        nxt = generate(eng, req)
        assert nxt.stats.ceiling_tok_s >= max(done.stats.decode_tok_s, nxt.stats.decode_tok_s)
        best = max(done.stats.decode_tok_s, nxt.stats.decode_tok_s)
    finally:
        eng.close()
    eng = LocalEngine.load(cfg)
    try:
        assert eng.ceiling_tok_s >= best
    finally:
        eng.close()
