"""Turning logits into a token: the one pipeline that plain and speculative decoding share.

``Sampler.distribution`` applies repeat penalty, temperature, top-k, top-p and min-p to
one row of logits and returns the target distribution p as (token ids, probabilities)
over its support. Plain decoding samples from it; the verifier samples from the very
same p, which is what makes speculation lossless. tau tempers first; with
``temper_last`` it follows llama.cpp's chain instead (the filters on the untempered
softmax, the temperature on what they keep), so both can sample one distribution.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from engine.types import SamplingParams

# The full pass searches the nucleus among the tokens whose weight is at least this fraction
# of the top token's first, then this fraction of that, ...: exact either way.
_CUT = 1e-4
# The cheap pass gathers the tokens weighing at least the first of these fractions of the top
# one and counts those above the others: below the last, a 152k vocabulary holds at most
# 1.5e-5 of the top token's weight.
_LEVELS = (1e-4, 1e-7, 1e-10)
_MARGIN = 1e-3  # logits: how far below a level its comparison reaches


class Sampler:
    def __init__(self, params: SamplingParams, rng: np.random.Generator | None = None) -> None:
        self.params = params
        self.rng = rng if rng is not None else np.random.default_rng(params.seed)
        self._buf: np.ndarray | None = None
        # temper_last: the filters run at temperature 1 (this sampler's draws, its own selection)
        self._select = (Sampler(replace(params, temperature=1.0, temper_last=False), self.rng)
                        if params.temper_last and not params.greedy else self)

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

    def is_argmax(self, logits: np.ndarray, history: Sequence[int], token: int) -> bool:
        """Whether ``argmax`` would return ``token``: one maximum over the rest of the row, no index kept
        (np.argmax's first-index rule for ties: earlier ties win, later ones lose)."""
        x = self.penalized(logits, history)
        if not 0 <= token < x.shape[0]:
            return False
        v = float(x[token])
        before, after = _max_around(x, token)
        if v > before and v >= after:
            return True
        if v == v and before == before and after == after:
            return False
        return int(np.argmax(x)) == token  # a NaN: argmax takes the first one

    def distribution(self, logits: np.ndarray, history: Sequence[int],
                     top_id: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The target distribution after all filters: (token ids, probabilities summing to 1).

        Penalties, top-k, top-p, min-p in llama.cpp's default order, but with the temperature
        applied to the logits first, so top-p and min-p see the tempered softmax (llama.cpp
        tempers last: at T < 1 its top-p keeps a wider nucleus than tau's for the same values).

        Exact but cheap on a 152k vocabulary (it runs for every verified row): the tokens that
        can matter are found by comparing logits with thresholds (no exponential over the
        vocabulary); only they are exponentiated and sorted. top-p needs the softmax's
        normalizer, which counts of the tokens above deeper thresholds bound: when the
        nucleus ends at the same token for every normalizer within the bounds it is exact;
        otherwise (a flat row) the full pass decides. ``top_id``: the row's only maximum where the
        caller has found it already (``sample_draft``), so no argmax runs.
        """
        p = self.params
        if self._select is not self:  # llama.cpp's order: select at temperature 1, then temper the kept weights
            ids, w = self._select.distribution(logits, history, top_id)
            w = np.power(w / w.max(), 1.0 / p.temperature)
            return ids, w / w.sum()
        x = self.penalized(logits, history)
        n = x.shape[0]
        if p.min_p > 0.0:  # min-p runs last and keeps the top: a row where it keeps nothing else needs no top-k
            top_id = int(np.argmax(x)) if top_id is None else top_id  # found once, for _candidates too
            if self._min_p_alone(float(x[top_id]), _max_but(x, top_id)):
                return np.array([top_id]), np.array([1.0])
        k = p.top_k if 0 < p.top_k < n else n
        pool = np.argpartition(-x, k - 1)[:k] if k < n else None
        xs = x[pool] if pool is not None else x
        if p.top_p >= 1.0 and p.min_p <= 0.0:
            sel = np.arange(xs.shape[0])  # every token stays: the full softmax
            probs = self._weights(xs, np.float32(1.0 / p.temperature)).astype(np.float64)
        else:
            found = self._candidates(xs, top_id if pool is None else None)
            sel, probs = found if found is not None else self._full(xs)
        idx = pool[sel] if pool is not None else sel
        if p.min_p > 0.0:
            keep = probs >= p.min_p * probs.max()
            idx, probs = idx[keep], probs[keep]
        return idx, probs / probs.sum()

    def _candidates(self, x: np.ndarray, top_id: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """(positions, unnormalized weights) of what top-p (then min-p) keeps, found among the
        tokens weighing at least ``_LEVELS[0]`` of the top one; None when the bounds cannot decide.

        Gathering a dense set of positions is what costs (a scattered flatnonzero over 152k
        logits takes longer than an exponential over all of them), so only the top level's
        positions are gathered; the deeper levels are counted, and bound the rest's mass. A
        confident row (copy runs) is decided by an argmax and one count."""
        p = self.params
        t = p.temperature
        i_top = int(x.argmax()) if top_id is None else top_id  # the caller found the row's only maximum
        m = float(x[i_top])
        if p.top_p >= 1.0:  # min-p alone keeps the weights >= min_p: no normalizer needed
            near = np.flatnonzero(x >= self._threshold(m, p.min_p))
            e = self._weights(x[near], np.float32(1.0 / t), m)
            keep = np.flatnonzero(e >= np.float32(p.min_p))
            return near[keep], e[keep].astype(np.float64)
        top, mid, deep = _LEVELS
        n = x.shape[0]
        n_mid = int(np.count_nonzero(x >= self._threshold(m, mid)))
        if n_mid == 1 and self._top_alone_fills(n):
            # a confident row: every other token weighs under 1e-7 of the top one, so the top
            # one alone holds top_p of the mass (any top_p up to 0.985 on 152k tokens)
            return np.array([i_top]), np.array([1.0])
        near = np.flatnonzero(x >= self._threshold(m, top))
        n_top = near.shape[0]
        n_deep = int(np.count_nonzero(x >= self._threshold(m, deep)))
        # at most what the tokens not gathered weigh: each band's count times its band's top weight
        tail = (n_mid - n_top) * top + (n_deep - n_mid) * mid + (n - n_deep) * deep
        xn = x[near]
        e = self._weights(xn, np.float32(1.0 / t), m)
        order = np.argsort(-xn, kind="stable")
        w = e[order].astype(np.float64)
        cum = np.cumsum(w)
        z_lo = float(cum[-1]) * (1 - 1e-9)  # (a rounding margin either way)
        z_hi = (float(cum[-1]) + tail) * (1 + 1e-9)
        if cum[-1] < p.top_p * z_hi:
            return None  # the nucleus may reach past the gathered tokens
        c = int(np.searchsorted(cum, p.top_p * z_lo, side="left"))
        if c != int(np.searchsorted(cum, p.top_p * z_hi, side="left")):
            return None  # where it ends depends on the rest of the vocabulary's mass
        sel = near[order[: c + 1]]
        return sel, w[: c + 1]

    def _min_p_alone(self, top: float, rest: float) -> bool:
        """Whether min-p keeps the top token alone: the largest of the others (``rest``) under its level."""
        return self.params.min_p > 0.0 and rest < float(self._threshold(top, self.params.min_p))

    def _top_alone_fills(self, n: int) -> bool:
        """Whether a top token every other of the n weighs under ``_LEVELS[1]`` of holds top_p alone."""
        return self._holds_top_p((n - 1) * _LEVELS[1])

    def _holds_top_p(self, rest: float) -> bool:
        """Whether the top token holds top_p alone when the others weigh at most ``rest`` times it."""
        return 1.0 / (1.0 + rest) >= self.params.top_p * (1 + 1e-9)

    def _threshold(self, m: float, level: float) -> np.float32:
        """The logit at which a token weighs ``level`` of the top one (a hair lower, so rounding
        cannot drop one whose float32 weight reaches it)."""
        return np.float32(m + self.params.temperature * math.log(level) - _MARGIN)

    def _full(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every token's weight, the normalizer exact, and the nucleus searched among the
        weights >= cut, the cut widening by ``_CUT`` until the selected tokens cover top_p."""
        e = self._weights(x, np.float32(1.0 / self.params.temperature))
        z = float(e.sum(dtype=np.float64))
        if self.params.top_p >= 1.0:  # min-p alone
            sel = np.flatnonzero(e >= np.float32(self.params.min_p))
            return sel, e[sel].astype(np.float64)
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

    def _weights(self, x: np.ndarray, inv_t: np.float32, top: float | None = None) -> np.ndarray:
        """exp((x - top) / T), top = max x unless given, in a reused float32 buffer (valid until the next call)."""
        buf = self._buf
        if buf is None or buf.shape[0] < x.shape[0]:
            buf = self._buf = np.empty(x.shape[0], dtype=np.float32)
        out = buf[: x.shape[0]]
        np.subtract(x, np.float32(x.max() if top is None else top), out=out)
        out *= inv_t
        np.exp(out, out=out)
        return out

    def sample(self, logits: np.ndarray, history: Sequence[int]) -> int:
        if self.params.greedy:
            return self.argmax(logits, history)
        ids, probs = self.distribution(logits, history)
        return int(ids[self._choice(probs)])

    def sample_draft(self, logits: np.ndarray, history: Sequence[int], draft: int) -> int:
        """``sample``'s token for a verified row whose draft token is ``draft``, from the same draw.

        One maximum over the rest of the row says whether the draft's token is the row's top; if
        it is, that replaces ``_candidates``' argmax, and a row where every other token weighs under
        1e-7 of it (most rows of a copy: top-p keeps the draft's token alone) is decided there, a
        single read of the row where ``sample`` takes an argmax, a comparison and a count. A GPU's
        verify pass holds 10-64 such rows. With min-p, a row where the same maximum shows that min-p keeps
        the draft's token alone is decided there too, top-k or not. Anything else is ``sample`` itself."""
        p = self.params
        x = self.penalized(logits, history)
        n = x.shape[0]
        by_top_p = 0.0 < p.top_p < 1.0 and (p.top_k <= 0 or p.top_k >= n)
        if not p.greedy and 0 <= draft < n and (p.min_p > 0.0 or by_top_p):
            top = float(x[draft])
            rest = _max_but(x, draft)
            sel = self._select  # a token the filters keep alone stays alone once tempered
            if rest < top:  # the draft's token is the row's only maximum: argmax's answer
                if sel._min_p_alone(top, rest):
                    self.rng.random()  # min-p keeps it alone, whatever top-k and top-p kept
                    return draft
                if by_top_p:
                    if (rest < float(sel._threshold(top, _LEVELS[1])) and sel._top_alone_fills(n)) \
                            or sel._alone_by_second(x, top, rest):
                        self.rng.random()  # the draw ``sample`` makes for it
                        return draft
                    ids, probs = self.distribution(x, (), top_id=draft)
                    return int(ids[self._choice(probs)])
        return self.sample(x, ())  # x has its penalties already

    def _alone_by_second(self, x: np.ndarray, top: float, second: float) -> bool:
        """Whether the top token alone holds top_p, bounding the rest by the second largest weight and
        one count: the tokens at or above the ``_LEVELS[2]`` level weigh at most the second's weight
        each, the others under that level. Decides the rows whose runner-up weighs 1e-7..1e-4 of the top
        (about two in five of a copy's rows), which the count-free test leaves to the full pass."""
        t = self.params.temperature
        w2 = math.exp((second - top) / t) * (1 + 1e-6)  # float32 rounding of the weights, generously
        deep = _LEVELS[2]
        if w2 * 8 > 1.0 / self.params.top_p - 1.0:
            return False  # room for fewer than eight such runners-up: the full pass decides, no count wasted
        n = x.shape[0]
        c = int(np.count_nonzero(x >= self._threshold(top, deep))) - 1  # the others at or above the level
        return self._holds_top_p(c * w2 + (n - 1 - c) * deep)

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


def _max_around(x: np.ndarray, i: int) -> tuple[float, float]:
    """The largest of x before i and after it (-inf where empty), read once without a temporary."""
    lo = float(x[:i].max()) if i > 0 else -math.inf
    hi = float(x[i + 1:].max()) if i + 1 < x.shape[0] else -math.inf
    return lo, hi


def _max_but(x: np.ndarray, i: int) -> float:
    """The largest of x but x[i] (NaN if any is NaN)."""
    lo, hi = _max_around(x, i)
    return max(lo, hi) if lo == lo and hi == hi else math.nan  # NaN compares false: no decision from it
