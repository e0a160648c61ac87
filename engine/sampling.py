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

# The nucleus is searched among the tokens whose weight is at least this fraction of the
# top token's first, then this fraction of that, ...: exact either way.
_CUT = 1e-4


class Sampler:
    def __init__(self, params: SamplingParams, rng: np.random.Generator | None = None) -> None:
        self.params = params
        self.rng = rng if rng is not None else np.random.default_rng(params.seed)
        self._buf: np.ndarray | None = None

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

        Exact but cheap on a 152k vocabulary (it runs for every verified row): one softmax
        pass over the vocabulary for the normalizer, then only the tokens whose weight is
        within ``_CUT`` of the top are sorted, widening the cut (rarely) until they cover
        top_p of the mass. Every token outside them weighs less than every token inside, so
        the nucleus is the same as a full sort's.
        """
        p = self.params
        x = self.penalized(logits, history)
        n = x.shape[0]
        k = p.top_k if 0 < p.top_k < n else n
        pool = np.argpartition(-x, k - 1)[:k] if k < n else None
        xs = x[pool] if pool is not None else x
        e = self._weights(xs, np.float32(1.0 / p.temperature))  # exp((x - max) / T), max weight 1
        z = float(e.sum(dtype=np.float64))
        if p.top_p >= 1.0:  # no nucleus: min-p alone keeps weights >= min_p (order does not matter)
            sel = np.flatnonzero(e >= np.float32(p.min_p)) if p.min_p > 0.0 else np.arange(e.shape[0])
            probs = e[sel].astype(np.float64) / z
        else:
            sel, probs = self._nucleus(xs, e, z)
        idx = pool[sel] if pool is not None else sel
        if p.min_p > 0.0:
            keep = probs >= p.min_p * probs.max()
            idx, probs = idx[keep], probs[keep]
        return idx, probs / probs.sum()

    def _nucleus(self, x: np.ndarray, e: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
        """The smallest top set holding top_p of the mass, searched among the weights >= cut,
        the cut widening by ``_CUT`` until the selected tokens cover top_p."""
        top_p = self.params.top_p
        cut = _CUT
        while True:
            sel = np.flatnonzero(e >= np.float32(cut)) if cut > 0.0 else np.arange(e.shape[0])
            sel = sel[np.argsort(-x[sel], kind="stable")]
            probs = e[sel].astype(np.float64) / z
            cum = np.cumsum(probs)
            if cum[-1] >= top_p or cut == 0.0:  # the nucleus ends among the selected tokens
                c = min(int(np.searchsorted(cum, top_p, side="left")) + 1, len(sel))
                return sel[:c], probs[:c]
            cut = cut * _CUT if cut > 1e-30 else 0.0

    def _weights(self, x: np.ndarray, inv_t: np.float32) -> np.ndarray:
        """exp((x - max x) / T) in a reused float32 buffer (valid until the next call)."""
        buf = self._buf
        if buf is None or buf.shape[0] != x.shape[0]:
            buf = self._buf = np.empty(x.shape[0], dtype=np.float32)
        np.subtract(x, x.max(), out=buf)
        buf *= inv_t
        np.exp(buf, out=buf)
        return buf

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
