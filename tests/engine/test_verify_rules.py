"""The acceptance rules on synthetic logits: greedy prefix, and exactness of both sampled rules."""

from __future__ import annotations

import numpy as np

from engine.sampling import Sampler
from engine.types import SamplingParams
from engine.verify import NEAR_TIE_LOGIT_GAP, near_tie, top2_gap, verify


def rows_for(dists: list[list[float]]) -> np.ndarray:
    return np.log(np.array(dists, dtype=np.float64) + 1e-12).astype(np.float32)


def test_greedy_accepts_the_matching_prefix_and_corrects() -> None:
    rows = rows_for([[0.1, 0.8, 0.1], [0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    s = Sampler(SamplingParams())
    v = verify(rows, [1, 0], s, [])
    assert (v.accepted, v.token) == (2, 2)  # both accepted, bonus token from the last row
    v = verify(rows, [1, 2], s, [])
    assert (v.accepted, v.token) == (1, 0)  # second draft wrong: the target's argmax replaces it
    v = verify(rows, [0, 0], s, [])
    assert (v.accepted, v.token) == (0, 1)


def test_greedy_flags_near_ties() -> None:
    rows = np.array([[1.0, 1.0 + NEAR_TIE_LOGIT_GAP / 2, -5.0], [0, 0, 0]], dtype=np.float32)
    v = verify(rows, [0], Sampler(SamplingParams()), [])
    assert v.accepted == 0 and v.near_tie
    rows[0, 1] = 4.0
    assert not verify(rows, [0], Sampler(SamplingParams()), []).near_tie


def test_the_near_tie_check_agrees_with_the_top_two_gap_on_random_rows() -> None:
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(400):
        row = (rng.normal(size=300) * rng.choice([0.05, 0.3, 2.0])).astype(np.float32)
        if rng.random() < 0.2:
            row[rng.integers(300)] = row.max()  # an exact tie
        top = int(np.argmax(row))
        expect = top2_gap(row) < NEAR_TIE_LOGIT_GAP
        seen.add(expect)
        assert near_tie(row, top) == expect
    assert seen == {True, False}


def _first_token_freq(draft: list[int], q: np.ndarray | None, p_rows: np.ndarray, n: int, seed: int) -> np.ndarray:
    s = Sampler(SamplingParams(temperature=1.0), np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    counts = np.zeros(p_rows.shape[1])
    for _ in range(n):
        d = draft
        if q is not None:
            d = [int(rng.choice(len(q[0]), p=q[0]))]
        v = verify(p_rows, d, s, [], q)
        tok = d[0] if v.accepted >= 1 else v.token
        counts[tok] += 1
    return counts / n


def test_sample_and_match_and_min_p_over_q_are_exact() -> None:
    p = np.array([0.5, 0.25, 0.15, 0.1])
    rows = rows_for([list(p), [0.25] * 4])
    # a deterministic draft (a point mass) and a stochastic one with a wrong q
    for q in (None, np.array([[0.1, 0.1, 0.4, 0.4]])):
        for draft in ([0], [3]):
            f = _first_token_freq(draft, q, rows, 20000, seed=11)
            assert np.allclose(f, p, atol=0.012), (q, draft, f)


def test_a_lossy_rule_would_be_caught() -> None:
    p = np.array([0.5, 0.25, 0.15, 0.1])
    q = np.array([[0.1, 0.1, 0.4, 0.4]])
    rng = np.random.default_rng(0)
    # accepting q's samples outright yields q, far from p: the tolerance above is tight enough
    naive = np.bincount(rng.choice(4, size=20000, p=q[0]), minlength=4) / 20000
    assert not np.allclose(naive, p, atol=0.012)
