"""engine.lab.simulate: the decode loop replayed in virtual time against a recorded output."""

from __future__ import annotations

import pytest

from engine.drafters.ngram import NgramDrafter
from engine.drafters.replay import ReplayDrafter
from engine.policy import CostCurve
from engine.lab.simulate import OracleContext, VirtualClock, ceiling, matches, simulate
from engine.spec import SpecConfig

CURVE = {1: 1.0, 2: 1.4, 3: 1.7, 4: 2.0, 8: 3.0, 16: 3.6, 24: 4.5}
PROMPT = [1, 2, 3, 4, 5, 6]
# an output that copies a block from the prompt and then repeats itself
OUTPUT = [1, 2, 3, 4, 5, 6, 7, 8] + [10 + i % 7 for i in range(40)] + [30, 31, 32] + [10 + i % 7 for i in range(30)]


def test_plain_replay_costs_what_plain_decoding_costs() -> None:
    r = simulate(PROMPT, OUTPUT, CURVE, spec=SpecConfig(drafters=()))
    assert r.speedup == pytest.approx(1.0)
    assert r.plain_s == pytest.approx((len(OUTPUT) - 1) * CURVE[1]) and r.drafted == 0 and r.tau == pytest.approx(1.0)


def test_oracle_context_charges_decode_passes_by_the_curve_and_not_the_prefill() -> None:
    clock = VirtualClock()
    ctx = OracleContext(PROMPT, OUTPUT, 64, CostCurve(dict(CURVE)), clock)
    rows = ctx.decode(PROMPT, 0, all_logits=False)
    assert clock.now == 0.0 and rows.shape == (1, 64) and int(rows[0].argmax()) == OUTPUT[0]
    rows = ctx.decode([OUTPUT[0], OUTPUT[1], 99], len(PROMPT), all_logits=True)
    assert clock.now == pytest.approx(CURVE[3])
    assert [int(r.argmax()) for r in rows] == OUTPUT[1:4]


@pytest.mark.parametrize("mode", ["greedy", "sampled"])
def test_a_drafter_that_is_always_right_pays_and_the_ceiling_bounds_it(mode: str) -> None:
    ref = PROMPT + OUTPUT
    r = simulate(PROMPT, OUTPUT, CURVE, drafter=lambda: ReplayDrafter(ref, [1.0]), mode=mode)
    assert r.speedup > 3.0 and r.accepted == r.drafted > 0
    plain_s, best_s = ceiling(PROMPT, OUTPUT, CURVE, drafter=lambda: ReplayDrafter(ref, [1.0]))
    assert plain_s == pytest.approx(r.plain_s) and plain_s / best_s >= r.speedup - 1e-9


def test_a_drafter_that_is_always_wrong_is_dropped_and_has_no_ceiling() -> None:
    ref = PROMPT + OUTPUT
    r = simulate(PROMPT, OUTPUT, CURVE, drafter=lambda: ReplayDrafter(ref, [0.0], vocab_size=64))
    assert r.accepted == 0
    assert r.speedup > 0.9  # a few failed windows while the policy learns, then plain passes
    plain_s, best_s = ceiling(PROMPT, OUTPUT, CURVE, drafter=lambda: ReplayDrafter(ref, [0.0], vocab_size=64))
    assert best_s == pytest.approx(plain_s)


def test_ngram_policy_stays_under_its_ceiling() -> None:
    r = simulate(PROMPT, OUTPUT, CURVE)
    plain_s, best_s = ceiling(PROMPT, OUTPUT, CURVE)
    assert 1.0 < r.speedup <= plain_s / best_s + 1e-9
    ms = matches(PROMPT, OUTPUT, NgramDrafter(), 24)
    assert len(ms) == len(OUTPUT) and ms[2] == 4  # after "1 2" the prompt proposes "3 4 5 6", which the output copies


def test_empty_output_is_refused() -> None:
    with pytest.raises(ValueError, match="nothing"):
        simulate(PROMPT, [], CURVE)
