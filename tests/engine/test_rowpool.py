"""Verification with a verify pass's rows prepared on threads gives the sequential verdicts exactly."""

from __future__ import annotations

import numpy as np
import pytest

from engine.rowpool import MIN_ROWS, RowPool
from engine.sampling import Sampler
from engine.types import SamplingParams
from engine.verify import verify

VOCAB = 4000
PARAMS = (
    SamplingParams(),
    SamplingParams(temperature=0.6, top_p=0.95, seed=7),
    SamplingParams(temperature=0.8, top_p=0.9, top_k=50, min_p=0.05, seed=3),
    SamplingParams(temperature=0.0, repeat_penalty=1.3, repeat_last_n=16),
    SamplingParams(temperature=0.7, top_p=0.95, repeat_penalty=1.2, repeat_last_n=8, seed=11),
)


@pytest.fixture(scope="module")
def pool():
    p = RowPool(3)  # an odd count: blocks do not divide the rows evenly
    yield p
    p.close()


def _case(rng: np.random.Generator, k: int) -> tuple[np.ndarray, list[int], list[int]]:
    """Rows that mostly agree with a draft (peaked on it), some rows flat, one divergence at times."""
    rows = (rng.normal(size=(k + 1, VOCAB)) * rng.choice([0.5, 2.0])).astype(np.float32)
    draft = [int(t) for t in rng.integers(0, VOCAB, k)]
    strong = rng.random() < 0.5  # else some rows are near-flat and may sample another token
    for i, d in enumerate(draft):
        rows[i, d] += 40.0 if strong else rng.choice([4.0, 9.0, 40.0])
    if rng.random() < 0.7:
        cut = int(rng.integers(0, k))
        rows[cut, draft[cut]] -= 60.0  # the target departs here
    history = [int(t) for t in rng.integers(0, VOCAB, 24)] + draft[:3]  # repeats for the penalty
    return rows, draft, history


@pytest.mark.parametrize("params", PARAMS, ids=lambda p: f"T{p.temperature}-rp{p.repeat_penalty}")
def test_pooled_verdicts_are_the_sequential_ones(pool: RowPool, params: SamplingParams) -> None:
    rng = np.random.default_rng(1)
    verdicts = set()
    for trial in range(60):
        k = int(rng.integers(MIN_ROWS - 1, 40))
        rows, draft, history = _case(rng, k)
        seq = Sampler(params, np.random.default_rng(trial))
        par = Sampler(params, np.random.default_rng(trial))
        a = verify(rows, draft, seq, history)
        b = verify(rows, draft, par, history, pool=pool)
        assert a == b
        assert seq.rng.random() == par.rng.random()  # the same draws, in the same order
        verdicts.add(a.accepted == k)
    assert verdicts == {True, False}  # whole windows and rejections both covered


def test_a_pool_needs_two_threads() -> None:
    with pytest.raises(ValueError):
        RowPool(1)
