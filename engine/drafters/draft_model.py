"""A small same-tokenizer draft model in its own context (KV cache always f16).

It keeps its KV cache in step with the target's history by common prefix (so a target
rollback is a draft rollback too), then drafts token by token: greedy, or, for sampled
generation, sampling from its own distribution q and returning q for the min(1, p/q) rule.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from engine.drafters.base import Draft
from engine.drafters.model_drafter import ModelDrafterBase, common_prefix

IN_STEP_SYNC = 32  # tokens: a sync this short is the per-pass one, longer ones are catch-ups


class DraftModelDrafter(ModelDrafterBase):
    name = "draft"

    def __init__(self, ctx, *, min_confidence: float = 0.0) -> None:  # ctx: engine.backend.Context (f16 KV)
        super().__init__()
        self.ctx = ctx
        self.kv: list[int] = []
        self.min_confidence = min_confidence
        self._kv_version = 0  # bumped whenever kv changes
        # lag()'s last answer: (history, kv list, kv version, history length, common prefix)
        self._lag_memo: tuple[Sequence[int], list[int], int, int, int] | None = None

    def reset(self) -> None:
        self.ctx.truncate(0)
        self.kv.clear()
        self._kv_version += 1

    def lag(self, history: Sequence[int]) -> int:
        """History tokens a sync would decode: all after the prefix its KV shares with ``history``
        (a server's next request from another conversation shares only the system prompt).

        The policy asks every pass while the drafter sits out; the decoder's history list only
        grows, so the shared prefix is extended over the new tokens, not compared whole again."""
        n = len(history)
        memo = self._lag_memo
        if (memo is not None and memo[0] is history and memo[1] is self.kv and memo[2] == self._kv_version
                and 0 < memo[3] <= n):
            seen, common = memo[3], memo[4]
            if common == seen:  # all it saw matched: the new tokens may match further
                kv = self.kv
                while common < n and common < len(kv) and kv[common] == history[common]:
                    common += 1
        else:
            common = common_prefix(self.kv, history)
        self._lag_memo = (history, self.kv, self._kv_version, n, common)
        return n - common

    def _sync(self, history: Sequence[int]) -> tuple[np.ndarray, int]:
        self._kv_version += 1
        common = common_prefix(self.kv, history)
        if common == len(history):
            common -= 1
        if common < len(self.kv):
            self.ctx.truncate(common)
            del self.kv[common:]
        room = self.ctx.n_ctx - 1
        todo = list(history[common:])
        if len(self.kv) + len(todo) > room:
            raise RuntimeError("draft context full")
        rows = self.ctx.decode(todo, len(self.kv), all_logits=False)
        self.kv.extend(todo)
        return rows[-1], len(todo)

    def catch_up(self, history: Sequence[int]) -> None:
        """Take in ``history`` now (with the target's prefill), so drafting later costs a step."""
        if not history or len(history) >= self.ctx.n_ctx:
            return
        t0 = time.perf_counter()
        _, synced = self._sync(history)
        self.charge(0.0, 0, time.perf_counter() - t0, synced)

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        if max_len <= 0 or not history or len(history) + max_len >= self.ctx.n_ctx:
            return Draft((), self.name)
        t_sync = time.perf_counter()
        logits, synced = self._sync(history)
        t0 = time.perf_counter()
        catch_s, caught = t0 - t_sync, synced
        if synced <= IN_STEP_SYNC:
            # drafting every pass means one decode to take in what the target accepted: its
            # logits give the first drafted token, so it is part of the cost of drafting (a
            # catch-up after the drafter sat out is charged apart, per token taken in)
            t0, catch_s, caught = t_sync, 0.0, 0
        sampler = self.sampler
        stochastic = not self.sampling.greedy
        toks: list[int] = []
        qs: list[np.ndarray] = []
        recent = list(history[-64:])
        for i in range(max_len):
            if stochastic:
                q = sampler.dense(logits, recent)
                nz = np.flatnonzero(q)
                t = sampler.sample_from(nz, q[nz])
                qs.append(q)
            else:
                t = int(np.argmax(logits))
                if self.min_confidence > 0 and i > 0:
                    z = logits - logits.max()
                    pr = np.exp(z)
                    if pr[t] / pr.sum() < self.min_confidence:
                        break
            toks.append(t)
            recent.append(t)
            if i + 1 < max_len:
                logits = self.ctx.decode([t], len(self.kv), all_logits=False)[-1]
                self.kv.append(t)
                self._kv_version += 1
        self.charge(time.perf_counter() - t0, len(toks), catch_s, caught)
        return Draft(tuple(toks), self.name, np.stack(qs) if qs else None)
