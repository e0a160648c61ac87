"""A long-running engine's lookup estimates, taught by edits that copy, meet a request where the
same confident matches break: within that request the calibration stops verifying them after a
pass or two (on a GPU each failed pass costs about four plain steps), while the next request
starts a calibration of its own."""

from __future__ import annotations

from engine.decoder import run
from engine.drafters.base import Draft
from engine.lab.simulate import VirtualClock
from engine.policy import Acceptance, CostCurve
from engine.requestcal import RequestCalibration
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams
from tests.engine.test_shadow import CountingCtx, V, Vocab

GPU_POINTS = {1: 1.0, 2: 4.1, 17: 4.9}  # a pass of any width re-captures the step's graph


class TimedCtx(CountingCtx):
    """Each pass moves a virtual clock by what that GPU charges for its rows."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__()
        self.clock, self.costs = clock, CostCurve(GPU_POINTS)

    def decode(self, tokens, pos0, *, all_logits):
        self.clock.now += self.costs.cost(len(tokens))
        return super().decode(tokens, pos0, all_logits=all_logits)


class Switchable:
    """A confident lookup drafter (32 tokens of context matched) that copies right or wrong."""

    name = "ngram"

    def __init__(self) -> None:
        self.right = True

    def propose(self, history, max_len):
        start = history[-1] + (1 if self.right else 2)
        return Draft(tuple((start + i) % V for i in range(max_len)), self.name, confidence=32)

    def reset(self) -> None:
        pass


def _serve(sp: Speculator, tokens: int = 120):
    req = GenerateRequest((1, 2, 3), max_tokens=tokens, sampling=SamplingParams(temperature=0.0))
    spec = SpecConfig(drafters=("ngram",), max_window=16)
    clock = VirtualClock()
    done = run(Target(TimedCtx(clock)), Vocab(), [1, 2, 3], req, spec, sp, lambda _e: None, clock=clock)
    assert list(done.token_ids) == [(4 + i) % V for i in range(tokens)]  # lossless whatever it drafts
    return done.stats


def test_a_request_where_trusted_matches_break_stops_verifying_them() -> None:
    drafter = Switchable()
    sp = Speculator(CostCurve(GPU_POINTS), {"ngram": DrafterSlot(drafter)}, Acceptance())
    for _ in range(3):  # edits: long copies, every draft accepted
        st = _serve(sp)
        assert st.accepted["ngram"] > 100
    drafter.right = False  # new code: the same confidence, nothing accepted
    st = _serve(sp, 30)
    assert st.accepted.get("ngram", 0) == 0
    assert st.drafted.get("ngram", 0) <= 2 * 16  # without the calibration: a 4-step pass for every token
    drafter.right = True  # an edit next: the last request's distrust is not carried into it
    st = _serve(sp)
    assert st.accepted["ngram"] > 100


def test_the_factor_only_ever_shrinks_the_estimates() -> None:
    cal = RequestCalibration()
    rates = [0.9, 0.2]
    assert cal.scaled(rates) is rates  # no evidence: the pooled estimates as they are
    cal.record(expected=3.0, accepted=0)
    assert [round(r, 3) for r in cal.scaled(rates)] == [round(1 - (1 - r) * 7 / 4, 3) if r > 1 - 4 / 7 else 0.0 for r in rates]
    cal.record(expected=1.0, accepted=40)  # a copy after all: back to the pooled estimates, never above
    assert cal.scaled(rates) is rates


def test_a_long_window_that_ended_at_an_edit_shrinks_expectations_by_its_shortfall_only() -> None:
    """A 63-token window along a copy that broke at token 22 (the edit) fell 18 short of 40
    expected: the next windows expect about 26/44 of what they did, not (26/44)^k of it (the
    per-position rates scaled by the factor stopped every window for 60 tokens in a replay)."""
    from engine.policy import expected_tokens

    rates = [0.98] * 63
    cal = RequestCalibration()
    cal.record(expected=40.0, accepted=22)
    f = cal.factor
    assert 0.5 < f < 0.7
    scaled = cal.scaled(rates)
    assert expected_tokens(scaled, 31) >= f * expected_tokens(rates, 31)
    assert expected_tokens(scaled, 31) < expected_tokens(rates, 31)
