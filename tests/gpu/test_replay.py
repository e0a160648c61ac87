"""The controlled-acceptance drafter, alone and inside the engine's decode loop."""

from __future__ import annotations

import pytest

from engine import backend  # noqa: I001  (llama_cpp before numpy)
from engine.decoder import run
from engine.drafters.replay import ReplayDrafter, expected_tau, rates_for_tau
from engine.policy import CostCurve
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams


def test_rates_for_tau_and_expected_tau() -> None:
    assert rates_for_tau(4, 7) == [1, 1, 1, 0, 0, 0, 0]
    assert expected_tau(rates_for_tau(4, 7), 7) == 4
    assert expected_tau([0.5], 2) == pytest.approx(1.75)
    with pytest.raises(ValueError):
        rates_for_tau(9, 4)


def test_replay_proposes_the_reference_corrupted_at_the_given_positions() -> None:
    ref = list(range(100, 140))
    d = ReplayDrafter(ref, [1.0, 1.0, 0.0], vocab_size=1000)
    draft = d.propose(ref[:10], 5)
    assert draft.tokens[:2] == (110, 111)
    assert draft.tokens[2] != 112
    assert d.propose(ref[:9] + [5], 5).tokens == ()  # off the reference: no draft
    assert d.propose(ref, 5).tokens == ()  # past its end
    assert len(d.propose(ref[:38], 5).tokens) == 2


def test_constant_rate_is_honoured_on_average() -> None:
    ref = list(range(2000))
    d = ReplayDrafter(ref, [0.7], vocab_size=5000, seed=3)
    hits = sum(t == ref[10 + i] for _ in range(400) for i, t in enumerate(d.propose(ref[:10], 1).tokens))
    assert 0.6 < hits / 400 < 0.8


@pytest.mark.parametrize("tau,window", [(4, 7), (8, 7)])
def test_engine_loop_reaches_the_synthetic_tau_and_stays_lossless(tiny_synth, tau: int, window: int) -> None:
    import numpy as np

    m = backend.Model(str(tiny_synth), gpu_layers=0)
    ctx = backend.Context(m, n_ctx=128, threads=1)
    try:
        prompt = [int(t) for t in np.random.default_rng(0).integers(1000, 100000, 16)]
        n = 33
        rows = ctx.decode(prompt, 0, all_logits=False)
        assert rows is not None
        tok = int(np.argmax(rows[-1]))
        ref = [tok]
        for i in range(n - 1):
            step = ctx.decode([tok], len(prompt) + i, all_logits=False)
            assert step is not None
            tok = int(np.argmax(step[-1]))
            ref.append(tok)
        ctx.clear()
        drafter = ReplayDrafter(prompt + ref, rates_for_tau(tau, window), vocab_size=m.n_vocab)
        spec = SpecConfig(drafters=("replay",), adaptive=False, fixed_window=window, max_window=window)
        sp = Speculator(CostCurve({1: 0.01}), {"replay": DrafterSlot(drafter)})
        req = GenerateRequest(prompt=tuple(prompt), max_tokens=n, sampling=SamplingParams())
        done = run(Target(ctx), m, prompt, req, spec, sp, lambda _e: None)  # type: ignore[arg-type]
        assert list(done.token_ids) == ref
        passes = done.stats.verify_passes - 1
        assert (len(ref) - 1) / passes == pytest.approx(tau, rel=0.15)
        assert done.stats.accepted["replay"] >= (tau - 1) * (passes - 2)  # every pass but the last one or two
    finally:
        ctx.close()
        m.close()
