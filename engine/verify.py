"""Verification: which prefix of a draft the target accepts, and the token that follows.

Lossless by construction: every emitted token is distributed exactly as plain decoding
from the same ``Sampler`` would distribute it.

- greedy: accept while the draft equals the target's argmax.
- sampled, deterministic draft: sample-and-match (sample x ~ p; accept while x equals the
  draft); the Leviathan/Chen rule for a point-mass q reduces to exactly this.
- sampled, stochastic draft with q: accept with min(1, p(x)/q(x)), else resample from the
  normalized max(0, p - q).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.rowpool import MIN_ROWS, RowPool
from engine.sampling import Sampler

NEAR_TIE_LOGIT_GAP = 0.5  # top-2 logit gap under which batched kernels may flip the argmax


@dataclass(frozen=True)
class Verdict:
    accepted: int  # draft tokens accepted
    token: int  # the target's token after them (correction, or bonus when all were accepted)
    near_tie: bool = False  # greedy rejection at a top-2 near-tie


def _recent(history: Sequence[int], sampler: Sampler) -> list[int]:
    n = sampler.params.repeat_last_n
    if sampler.params.repeat_penalty == 1.0 or n == 0:
        return []
    return list(history[-n:]) if n > 0 else list(history)


def verify(rows: np.ndarray, draft: Sequence[int], sampler: Sampler, history: Sequence[int], q: np.ndarray | None = None,
           pool: RowPool | None = None) -> Verdict:
    """rows[i] are the target's logits after history + draft[:i]; len(rows) == len(draft) + 1.
    pool: the rows' argmax or distributions prepared on its threads (the same verdict)."""
    if q is not None and not sampler.params.greedy:
        return verify_stochastic(rows, draft, q, sampler, history)
    recent = _recent(history, sampler)
    if pool is not None and len(draft) + 1 >= MIN_ROWS:
        return _verify_pooled(rows, draft, sampler, recent, pool)
    greedy = sampler.params.greedy
    for i, d in enumerate(draft):
        if greedy:  # an accepted row needs only "is the draft the argmax": no index kept
            row = sampler.penalized(rows[i], recent)  # once: the argmax and the tie check of a rejection reuse it
            if not sampler.is_argmax(row, (), d):
                x = sampler.argmax(row, ())
                return Verdict(i, x, near_tie(row, x))
        else:
            x = sampler.sample_draft(rows[i], recent, d)
            if x != d:
                return Verdict(i, x)
        if recent:
            recent.append(d)
    last = rows[len(draft)]
    return Verdict(len(draft), sampler.argmax(last, recent) if greedy else sampler.sample(last, recent))


def _verify_pooled(rows: np.ndarray, draft: Sequence[int], sampler: Sampler, recent: list[int], pool: RowPool) -> Verdict:
    """``verify``'s loop over rows prepared a block at a time on the pool's threads; the samples
    are drawn here in row order, as the sequential loop draws them."""
    greedy = sampler.params.greedy

    def seen(i: int) -> list[int]:
        return recent + list(draft[:i]) if recent else []

    n = len(draft)
    i = 0
    while i <= n:
        stop = min(n + 1, i + pool.block)
        for j, got in enumerate(pool.prepare(rows, i, stop, sampler.params, seen), start=i):
            x = got if greedy else sampler.sample_from(*got)
            if j == n:
                return Verdict(n, x)
            if x != draft[j]:
                tie = greedy and near_tie(sampler.penalized(rows[j], seen(j)), x)
                return Verdict(j, x, tie)
        i = stop
    raise AssertionError("unreachable: the last row returns")


def verify_stochastic(rows: np.ndarray, draft: Sequence[int], q: np.ndarray, sampler: Sampler, history: Sequence[int]) -> Verdict:
    """Leviathan et al. / Chen et al. speculative sampling; q[i] is the drafter's distribution for draft[i]."""
    recent = _recent(history, sampler)
    rng = sampler.rng
    for i, d in enumerate(draft):
        ids, p = sampler.distribution(rows[i], recent)  # p over its support only: no dense vocabulary
        qi = q[i]
        at = np.flatnonzero(ids == d)
        p_d = float(p[at[0]]) if at.shape[0] else 0.0
        if qi[d] <= 0.0 or rng.random() >= min(1.0, p_d / qi[d]):
            resid = np.maximum(p - qi[ids], 0.0)  # max(0, p - q) is 0 wherever p is
            z = resid.sum()
            if z <= 0:
                return Verdict(i, sampler.sample_from(ids, p))
            nz = resid > 0
            return Verdict(i, sampler.sample_from(ids[nz], resid[nz] / z))
        if recent:
            recent.append(d)
    return Verdict(len(draft), sampler.sample(rows[len(draft)], recent))


def near_tie(logits: np.ndarray, top: int) -> bool:
    """Whether another logit lies within NEAR_TIE_LOGIT_GAP of the argmax ``top``: one comparison
    over the row, where a partition for the top two costs about 1.2 ms on a 152k vocabulary,
    paid on every rejected greedy pass (a GPU step is about 2 ms)."""
    return int(np.count_nonzero(logits > logits[top] - np.float32(NEAR_TIE_LOGIT_GAP))) > 1


def top2_gap(logits: np.ndarray) -> float:
    """The gap between the two largest logits (how near a tie the argmax is)."""
    top2 = np.partition(logits, -2)[-2:]
    return float(abs(top2[1] - top2[0]))
