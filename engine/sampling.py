"""Turning logits into a token: the one pipeline that plain and speculative decoding share.

``Sampler.distribution`` applies repeat penalty, temperature, top-k, top-p and min-p to
one row of logits and returns the target distribution p as (token ids, probabilities)
over its support. Plain decoding samples from it; the verifier samples from the very
same p, which is what makes speculation lossless.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.types import SamplingParams

# The nucleus is searched among this many top tokens first; a full sort only happens
# when they do not cover top_p of the mass (exact either way).
_FAST_CANDIDATES = 64


class Sampler:
    def __init__(self, params: SamplingParams, rng: np.random.Generator | None = None) -> None:
        self.params = params
        self.rng = rng if rng is not None else np.random.default_rng(params.seed)

    # -- logits processing -------------------------------------------------------------
    def penalized(self, logits: np.ndarray, history: Sequence[int]) -> np.ndarray:
        p = self.params
        if p.repeat_penalty == 1.0 or p.repeat_last_n == 0 or not history:
            return logits
        recent = history[-p.repeat_last_n :] if p.repeat_last_n > 0 else history
        ids = np.unique(np.fromiter(recent, dtype=np.int64, count=len(recent)))
        out = logits.copy()
        vals = out[ids]
        out[ids] = np.where(vals > 0, vals / p.repeat_penalty, vals * p.repeat_penalty)
        return out

    def argmax(self, logits: np.ndarray, history: Sequence[int]) -> int:
        return int(np.argmax(self.penalized(logits, history)))

    def distribution(self, logits: np.ndarray, history: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The target distribution after all filters: (token ids, probabilities summing to 1).

        Order as in llama.cpp's default chain: penalties, top-k, top-p, min-p, temperature
        applied to the logits before the softmax that top-p and min-p see.
        """
        p = self.params
        x = self.penalized(logits, history) * np.float32(1.0 / p.temperature)
        n = x.shape[0]
        k = p.top_k if 0 < p.top_k < n else n
        e = np.exp(x - x.max())
        if k == n and p.top_p >= 1.0:
            idx = np.arange(n)
            probs = e.astype(np.float64)
        else:
            pool = np.argpartition(-x, k - 1)[:k] if k < n else None
            z = float(e[pool].sum(dtype=np.float64)) if pool is not None else float(e.sum(dtype=np.float64))
            m = min(k, _FAST_CANDIDATES)
            if pool is None:
                idx = np.argpartition(-x, m - 1)[:m]
            else:
                idx = pool[np.argpartition(-x[pool], m - 1)[:m]] if m < k else pool
            idx = idx[np.argsort(-x[idx], kind="stable")]
            probs = e[idx].astype(np.float64) / z
            if m < k and probs.sum() < p.top_p:  # the nucleus is wider: sort the whole pool
                idx = np.argsort(-x, kind="stable") if pool is None else pool[np.argsort(-x[pool], kind="stable")]
                probs = e[idx].astype(np.float64) / z
            if p.top_p < 1.0:
                cum = np.cumsum(probs)
                cut = int(np.searchsorted(cum, p.top_p, side="left")) + 1
                idx, probs = idx[:cut], probs[:cut]
        if p.min_p > 0.0:
            keep = probs >= p.min_p * probs.max()
            idx, probs = idx[keep], probs[keep]
        return idx, probs / probs.sum()

    def sample(self, logits: np.ndarray, history: Sequence[int]) -> int:
        if self.params.greedy:
            return self.argmax(logits, history)
        ids, probs = self.distribution(logits, history)
        return int(ids[self._choice(probs)])

    def _choice(self, probs: np.ndarray) -> int:
        u = self.rng.random()
        i = int(np.searchsorted(np.cumsum(probs), u, side="right"))
        return min(i, len(probs) - 1)

    def sample_from(self, ids: np.ndarray, probs: np.ndarray) -> int:
        return int(ids[self._choice(probs)])

    def dense(self, logits: np.ndarray, history: Sequence[int]) -> np.ndarray:
        """p as a dense vector over the vocabulary (for the stochastic-draft rule)."""
        n = logits.shape[0]
        out = np.zeros(n, dtype=np.float64)
        if self.params.greedy:
            out[self.argmax(logits, history)] = 1.0
            return out
        ids, probs = self.distribution(logits, history)
        out[ids] = probs
        return out
