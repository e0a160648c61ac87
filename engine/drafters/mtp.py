"""Drafting with the target's own MTP (NextN) head.

The target context must be an :class:`engine.mtp_backend.MtpTargetContext`: it outputs
its hidden state for every token and replays every batch it decodes into the head's KV
cache, so when the decode loop asks for a draft the head already holds positions
0..n-2 (the target's KV) and the target's hidden state at n-2. The drafter then runs the
head autoregressively from the last sampled token: step 1 is (x_{n-1}, h_{n-2}) at n-1,
each further step feeds the drafted token with the head's own output state. Afterwards
the head's KV is cut back to the target's, so rollbacks need nothing more.

Greedy mode drafts the head's argmax; sampled mode samples from the head's distribution q
(through the request's sampler filters) and returns q for the min(1, p/q) rule.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from engine.drafters.base import Draft
from engine.drafters.model_drafter import ModelDrafterBase


class MtpDrafter(ModelDrafterBase):
    name = "mtp"

    def __init__(self, target_ctx, *, min_confidence: float = 0.0) -> None:  # target_ctx: MtpTargetContext
        super().__init__()
        self.tctx = target_ctx
        self.head = target_ctx.head
        self.min_confidence = min_confidence
        self.out_of_step = 0  # proposals refused because the history did not extend the target's KV

    def reset(self) -> None:
        """Nothing of its own to forget: the head's KV follows the target's context."""
        self.head.truncate(len(self.tctx.tokens))

    def _in_step(self, history: Sequence[int]) -> bool:
        """The target's KV holds history[:-1] (checked on its last 64 tokens) and so does the head's."""
        kv = self.tctx.tokens
        n = len(history)
        if n == 0 or len(kv) != n - 1 or self.head.n_kv != n - 1:
            return False
        lo = max(0, n - 65)
        return kv[lo:] == list(history[lo : n - 1])

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        n = len(history)
        if max_len <= 0 or n == 0 or n + max_len >= self.head.n_ctx:
            return Draft((), self.name)
        if not self._in_step(history):
            self.out_of_step += 1
            return Draft((), self.name)
        h = self.tctx.h_at(n - 2)
        if h is None:
            self.out_of_step += 1
            return Draft((), self.name)
        t0 = time.perf_counter()
        sampler = self.sampler
        stochastic = not self.sampling.greedy
        toks: list[int] = []
        qs: list[np.ndarray] = []
        recent = list(history[-64:])
        tok = int(history[-1])
        try:
            for i in range(max_len):
                res = self.head.decode([tok], h[None, :], n - 1 + i, output_last=True)
                assert res is not None
                logits, h = res
                if stochastic:
                    q = sampler.dense(logits, recent)
                    nz = np.flatnonzero(q)
                    tok = sampler.sample_from(nz, q[nz])
                    qs.append(q)
                else:
                    tok = int(np.argmax(logits))
                    if self.min_confidence > 0 and i > 0:
                        z = np.exp(logits - logits.max())
                        if z[tok] / z.sum() < self.min_confidence:
                            break
                toks.append(tok)
                recent.append(tok)
        finally:
            self.head.truncate(n - 1)  # drop the drafted positions: the head follows the target
        self.charge(time.perf_counter() - t0, len(toks))
        return Draft(tuple(toks), self.name, np.stack(qs) if qs else None)
