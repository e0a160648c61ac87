from __future__ import annotations

import pytest

from engine.policy import (
    POSITION_WEIGHT,
    Acceptance,
    CostCurve,
    choose_window,
    confidence_bucket,
    expected_tokens,
)

CPU = CostCurve({1: 1.0, 2: 1.5, 4: 2.0, 8: 4.5, 16: 6.5})  # rows verified -> cost, as measured on this CPU
GPU = CostCurve({1: 1.0, 8: 2.4, 16: 2.1, 32: 2.7})  # the H200 measurement


def test_expected_tokens() -> None:
    assert expected_tokens([0.5, 0.5], 0) == 1.0
    assert expected_tokens([0.5, 0.5], 2) == 1.75
    assert expected_tokens([1.0] * 4, 4) == 5.0


def test_cost_curve_interpolates_and_learns() -> None:
    c = CostCurve({1: 1.0, 5: 2.0})
    assert c.cost(3) == 1.5
    assert c.cost(9) == 3.0  # extrapolated
    for _ in range(300):
        c.observe(5, 4.0)
    assert 3.9 < c.cost(5) <= 4.1


def test_a_slower_machine_scales_the_whole_curve_not_only_the_observed_point() -> None:
    # plain decoding observes only single rows; when the machine slows down by 30% the
    # windows must not start to look cheap relative to the single row
    c = CostCurve({1: 1.0, 2: 1.5, 16: 5.0})
    for _ in range(200):
        c.observe(1, 1.3)
    assert abs(c.cost(1) - 1.3) < 0.01
    assert abs(c.relative(2) - 1.5) < 1e-9 and abs(c.cost(16) - 6.5) < 0.05
    # a point whose shape was mismeasured is learned from its own observations
    for _ in range(400):
        c.observe(1, 1.3)
        c.observe(16, 1.3 * 7.0)
    assert 6.8 < c.relative(16) < 7.2 and abs(c.cost(1) - 1.3) < 0.1


def test_low_acceptance_means_plain_decoding() -> None:
    assert choose_window(CPU, [0.3] * 16, 16).k == 0
    # an expensive drafter does not pay even with decent acceptance on this CPU
    assert choose_window(CPU, [0.7] * 16, 16, draft_cost=0.4).k == 0


def test_high_acceptance_means_long_windows_where_verification_is_cheap() -> None:
    cpu = choose_window(CPU, [0.98] * 16, 16)
    gpu = choose_window(GPU, [0.98] * 16, 16)
    assert cpu.k >= 4 and cpu.gain > 1.5
    assert gpu.k == 16 and gpu.gain > cpu.gain


def test_acceptance_learns_by_position_and_bucket() -> None:
    a = Acceptance(prior=0.5)
    for _ in range(50):
        a.update("ngram:greedy", 3, 4, 4)
        a.update("ngram:greedy", 1, 4, 0)
    hi = a.rates("ngram:greedy", 3, 4)
    lo = a.rates("ngram:greedy", 1, 4)
    assert min(hi) > 0.9 and lo[0] < 0.1 and expected_tokens(lo, 4) < 1.1
    assert a.rates("draft:greedy", 0, 2) == [0.5, 0.5]
    assert len(a.by_position("ngram:greedy")) == 4


def test_confidence_buckets() -> None:
    assert [confidence_bucket(c) for c in (0, 1, 2, 3, 4, 8, 100)] == [0, 0, 1, 1, 2, 3, 5]


def test_positions_after_a_rejection_are_not_counted_as_reached() -> None:
    """With a true conditional rate r at every position, the estimate must stay near r
    instead of decaying with position (which would shrink every window)."""
    import numpy as np

    rng = np.random.default_rng(0)
    a = Acceptance(prior=0.5, decay=1.0)
    for _ in range(4000):
        accepted = 0
        while accepted < 8 and rng.random() < 0.8:
            accepted += 1
        a.update("x", 1, 8, accepted)
    rates = a.rates("x", 1, 8)
    assert all(abs(r - 0.8) < 0.05 for r in rates[:6]), rates


def test_a_drafter_that_cannot_pay_here_is_never_probed() -> None:
    from engine.drafters.base import Draft
    from engine.slot import DrafterSlot
    from engine.spec import SpecConfig
    from engine.speculator import Speculator

    class Costly:
        name = "draft"
        calls = 0
        cost_per_token = 0.6  # relative to a target pass of 1.0, as the 0.5B drafter on this CPU

        def propose(self, history, max_len):
            Costly.calls += 1
            return Draft(tuple(range(max_len)), "draft")

        def reset(self) -> None:
            pass

    sp = Speculator(CPU, {"draft": DrafterSlot(Costly(), lookup=False)})
    for _ in range(500):
        draft, _ = sp.pick([1, 2, 3], SpecConfig(drafters=("draft",)), "greedy", 16)
        assert draft is None
    assert Costly.calls == 0
    # where verification is cheap and drafting is cheap, the same drafter is used
    sp = Speculator(GPU, {"draft": DrafterSlot(Costly(), lookup=False)})
    Costly.cost_per_token = 0.05
    draft, _ = sp.pick([1, 2, 3], SpecConfig(drafters=("draft",)), "greedy", 16)
    assert draft is not None and len(draft.tokens) > 0


def test_the_incremental_window_choice_matches_the_formula() -> None:
    import random

    rng = random.Random(7)
    for curve in (CPU, GPU):
        for _ in range(200):
            rates = [rng.random() for _ in range(24)]
            cost = rng.choice([0.0, 0.05, 0.3])
            got = choose_window(curve, rates, 24, draft_cost=cost, margin=0.0)
            gains = {k: expected_tokens(rates, k) / (curve.cost(k + 1) + k * cost) * curve.cost(1) for k in range(1, 25)}
            k_best = max(gains, key=lambda k: gains[k])
            if gains[k_best] > 1.0:
                assert got.k == k_best and abs(got.gain - gains[k_best]) < 1e-9
            else:
                assert got.k == 0


def test_the_tabled_curve_follows_what_it_observes() -> None:
    c = CostCurve({1: 1.0, 5: 2.0})
    assert c.relative(3) == 1.5 and c.relative(100) == c._relative(100)  # past the table: computed
    for _ in range(50):
        c.observe(5, 3.0)
    assert c.relative(3) == c._relative(3) and c.relative(3) > 1.5  # the table was rebuilt


def test_the_verify_curve_charges_a_pass_what_it_costs_the_step_after_it() -> None:
    # a CUDA build replays a captured graph for repeated single-token steps; any other batch
    # size makes the next single step re-capture it. A pass must be charged that.
    from engine.costs import verify_curve

    class GraphContext:
        n_ctx = 4096

        def __init__(self) -> None:
            self.now, self.since_change = 0.0, 2

        def clock(self) -> float:
            return self.now

        def decode(self, tokens, pos, *, all_logits):
            n = len(tokens)
            if n == 1:  # replay; or, after another size, a step without the graph, then its capture
                self.now += {0: 2.0, 2: 3.6, 1: 2.8}[self.since_change]
                self.since_change = max(0, self.since_change - 1)
            else:
                self.now += 3.0 + 0.05 * n
                self.since_change = 2

        def truncate(self, pos):
            pass

    ctx = GraphContext()
    curve = verify_curve(ctx, 1000, points=(1, 2, 8, 16), clock=ctx.clock)
    assert abs(curve[1] - 2.0) < 1e-9  # the steady step, not the re-captured one
    for n in (2, 8, 16):
        assert abs(curve[n] - (3.0 + 0.05 * n + 1.6 + 0.8)) < 1e-6


def test_a_verify_pass_is_charged_the_step_after_it_and_that_step_leaves_the_scale_alone() -> None:
    # a CUDA build: 4 rows take 2.0 (a step 1.0), and the two single steps after them 1.6 (no
    # graph) and 1.3 (its capture)
    from engine.policy import observe_pass

    c = CostCurve({1: 1.0, 4: 2.0})
    pending = None
    for _ in range(300):
        for n, t in ((1, 1.0), (1, 1.0), (4, 2.0), (1, 1.6), (1, 1.3), (1, 1.0)):
            pending = observe_pass(c, n, t, pending)
    assert abs(c.cost(1) - 1.0) < 0.01  # the slow steps after each pass did not raise the scale
    assert abs(c.relative(4) - 2.9) < 0.02  # the pass carries its penalty
    # two passes in a row: the first has no single step after it to charge
    c2 = CostCurve({1: 1.0, 4: 2.0})
    pending = observe_pass(c2, 4, 2.0, None)
    assert observe_pass(c2, 4, 2.0, pending) == (4, 2.0, 2) and abs(c2.relative(4) - 2.0) < 1e-9


def test_one_break_in_a_copy_does_not_cap_every_later_window_there() -> None:
    # windows of 14 along copies, all accepted, and one of 40 that an edit broke at 14: the
    # positions past 14 have never been reached, and must not inherit that single rejection
    # (chained to the previous position's estimate they did, and windows stopped at 14 for good)
    a = Acceptance()
    for _ in range(60):
        a.update("ngram:sampled", 5, 14, 14)
    a.update("ngram:sampled", 5, 40, 14)
    rates = a.rates("ngram:sampled", 5, 40)
    assert rates[14] < min(rates[:14]) and min(rates[14:]) > 0.9
    flat = CostCurve({1: 1.0, 2: 4.0, 41: 4.2})  # the 1.5B on the H200: about 4 steps for any pass
    assert choose_window(flat, rates, 40).k > 30


def test_an_opening_copy_has_its_own_bucket_until_its_match_alone_is_top() -> None:
    from engine.policy import OPENING_BUCKET, OPENING_MATCH, confidence_bucket

    assert confidence_bucket(6, opening=True) == OPENING_BUCKET != confidence_bucket(6)
    assert confidence_bucket(OPENING_MATCH, opening=True) == confidence_bucket(OPENING_MATCH) == 5
    assert confidence_bucket(6, resync=True, opening=True) == confidence_bucket(6, resync=True)


def test_positions_past_the_evidence_read_the_pooled_rate() -> None:
    # one window of four accepted whole says little of position 40: it reads the later positions'
    # pooled rate shrunk towards the prior, not 1.0 (chained through every position, the same
    # passes were counted again and again, and a CPU edit's 48-row windows broke at the next edit)
    acc = Acceptance(prior=0.5, prior_weight=2.0, decay=1.0)
    acc.update("ngram:greedy", 5, drafted=4, accepted=4)
    r = acc.rates("ngram:greedy", 5, 48)
    pooled = (3 + 2 * 0.5) / (3 + 2)  # positions 1-3 reached and accepted once each
    assert r[40] == pytest.approx(pooled)
    assert r[4] == pytest.approx(r[40])
    assert r[0] == pytest.approx((1 + 2 * 0.5) / (1 + 2))  # position 0 learns apart
    assert r[2] == pytest.approx((1 + POSITION_WEIGHT * pooled) / (1 + POSITION_WEIGHT))


def test_one_break_that_short_windows_never_revisit_does_not_trap_them() -> None:
    # a Go edit on the CPU: 4-row windows (3 drafts) along the copy, all accepted, after one wider
    # window an edit broke at position 8. By position alone, position 8 read 0.67 for good (no
    # window reached it again) and every window stayed at 3 drafts where 15-27 pay.
    a = Acceptance()
    a.update("ngram:greedy", 5, 28, 8)
    for _ in range(40):
        a.update("ngram:greedy", 5, 3, 3)
    rates = a.rates("ngram:greedy", 5, 32)
    assert min(rates) > 0.9
    cpu = CostCurve({1: 1.0, 2: 1.92, 4: 2.63, 5: 3.43, 8: 5.85, 16: 8.55, 28: 13.36, 32: 15.2, 64: 30.6})
    assert choose_window(cpu, rates, 32).k >= 15
