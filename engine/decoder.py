"""The decode loop: prefill with prefix reuse, then draft -> verify -> roll back, until done.

Runs on the engine's owner thread. Plain decoding is the same loop with windows of 0.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from engine.drafters.base import Draft, Drafter
from engine.policy import Acceptance, CostCurve, choose_window, confidence_bucket
from engine.sampling import Sampler
from engine.shadow import Shadow
from engine.spec import SpecConfig
from engine.textstream import TextStream
from engine.types import (
    CancelToken,
    DoneEvent,
    EngineEvent,
    GenerateRequest,
    GenStats,
    StatsEvent,
    TokenEvent,
)
from engine.verify import verify

STATS_INTERVAL_S = 0.25
PROBE_EVERY = 64  # passes between exploratory windows of a drafter the policy has shelved
OPTIMISTIC_RATE = 0.9  # a costly drafter is probed only if it would pay at this acceptance
# ... and only if catching its context up with the history costs at most this many plain
# steps: after sitting out a 1000-token edit the 0.5B drafter's catch-up on the 2-core CPU
# took seconds, and one such probe took an edit from 2.6x to 1.8x.
PROBE_CATCHUP_STEPS = 8


class TokenModel(Protocol):
    """What the loop needs from a model: token bytes and end-of-generation ids."""

    def piece(self, token: int) -> bytes: ...

    def is_eog(self, token: int) -> bool: ...


class Target:
    """A target context plus the exact token list its KV cache holds."""

    def __init__(self, ctx) -> None:  # ctx: engine.backend.Context (duck-typed for tests)
        self.ctx = ctx
        self.kv: list[int] = []

    @property
    def n_ctx(self) -> int:
        return int(self.ctx.n_ctx)

    def prefill(self, prompt: Sequence[int]) -> tuple[np.ndarray, int]:
        """Evaluate the prompt reusing the longest cached prefix; returns (last logits, reused)."""
        if not prompt:
            raise ValueError("empty prompt")
        common = 0
        m = min(len(self.kv), len(prompt))
        while common < m and self.kv[common] == prompt[common]:
            common += 1
        if common == len(prompt):
            common -= 1  # re-evaluate the last token to get its logits
        self.rollback(common)
        rows = self.eval(prompt[common:], all_logits=False)
        assert rows is not None
        return rows[-1], common

    def eval(self, tokens: Sequence[int], *, all_logits: bool) -> np.ndarray | None:
        rows = self.ctx.decode(tokens, len(self.kv), all_logits=all_logits)
        self.kv.extend(tokens)
        return rows

    def rollback(self, n_keep: int) -> None:
        if n_keep < len(self.kv):
            self.ctx.truncate(n_keep)
            del self.kv[n_keep:]


@dataclass
class DrafterSlot:
    drafter: Drafter
    lookup: bool = True  # drafting is free (n-gram): propose first, then size the window
    initial_cost: float = 0.0  # seconds per drafted token before any were measured
    shelved_passes: int = 0
    drafted: int = 0
    accepted: int = 0

    def cost(self) -> float:
        if self.lookup:
            return 0.0
        measured = getattr(self.drafter, "cost_per_token", 0.0)
        return measured or self.initial_cost


@dataclass
class LoopState:
    """Per-generation counters that become GenStats."""

    prompt_tokens: int = 0
    reused: int = 0
    passes: int = 0
    prefill_s: float = 0.0
    decode_s: float = 0.0
    drafted: dict[str, int] = field(default_factory=dict)
    accepted: dict[str, int] = field(default_factory=dict)
    reached: list[int] = field(default_factory=list)
    acc_pos: list[int] = field(default_factory=list)
    near_ties: int = 0

    def record(self, name: str, k: int, accepted: int) -> None:
        self.drafted[name] = self.drafted.get(name, 0) + k
        self.accepted[name] = self.accepted.get(name, 0) + accepted
        while len(self.reached) < k:
            self.reached.append(0)
            self.acc_pos.append(0)
        for i in range(min(k, accepted + 1)):  # positions after the first rejection were not reached
            self.reached[i] += 1
            if i < accepted:
                self.acc_pos[i] += 1


class Speculator:
    """Long-lived speculation state of one engine: drafters, cost curve, acceptance."""

    def __init__(self, curve: CostCurve, drafters: dict[str, DrafterSlot], acceptance: Acceptance | None = None) -> None:
        self.curve = curve  # as measured at load; each sampling mode refines its own copy
        self.curves: dict[str, CostCurve] = {}
        self.slots = drafters
        self.acceptance = acceptance or Acceptance()
        self.unverified: Shadow | None = None  # the last pick's free proposal it chose not to verify
        self.prefill_s_per_token = 0.0  # the target's, from the last long prefill (0 = not seen)

    def curve_for(self, mode: str) -> CostCurve:
        """The cost curve of one sampling mode: a pass's host work (sampling every verified row
        at temperature 0.6 and top-p 0.95 against an argmax) differs by mode, and on a GPU,
        where a pass takes a couple of milliseconds, it is a real part of the pass."""
        c = self.curves.get(mode)
        if c is None:
            c = self.curves[mode] = copy.deepcopy(self.curve)
        return c

    def pick(self, hist: list[int], spec: SpecConfig, mode: str, room: int) -> tuple[Draft | None, int]:
        """The draft to verify next (or None for a plain pass) and its bucket."""
        max_k = min(spec.max_window, room)
        self.unverified = None
        if max_k <= 0:
            return None, 0
        for name in spec.drafters:
            slot = self.slots.get(name)
            if slot is None:
                continue
            key = f"{name}:{mode}"
            if slot.lookup:
                d = slot.drafter.propose(hist, max_k)
                if not d.tokens:
                    continue
                bucket = confidence_bucket(d.confidence, d.resync)
                k = self._window(slot, key, bucket, len(d.tokens), spec, mode, len(hist))
                if k > 0:
                    return _cut(d, k), bucket
                if self.unverified is None:
                    self.unverified = Shadow(key, bucket, tuple(d.tokens))
                continue
            k = self._window(slot, key, 0, max_k, spec, mode, len(hist))
            if k > 0:
                d = slot.drafter.propose(hist, k)
                if d.tokens:
                    return d, 0
        return None, 0

    def _window(self, slot: DrafterSlot, key: str, bucket: int, max_k: int, spec: SpecConfig, mode: str,
                n_hist: int) -> int:
        if not spec.adaptive:
            return min(spec.fixed_window, max_k)
        curve = self.curve_for(mode)
        rates = self.acceptance.rates(key, bucket, max_k)
        choice = choose_window(curve, rates, max_k, slot.cost())
        if choice.k > 0:
            slot.shelved_passes = 0
            return choice.k
        cost = slot.cost()
        if slot.lookup:
            return 0  # its unverified proposals are checked against plain passes for free (engine.shadow)
        if cost > 0 and choose_window(curve, [OPTIMISTIC_RATE] * max_k, max_k, cost).k == 0:
            return 0  # even a drafter that predicts well would not pay on this hardware: no probes
        slot.shelved_passes += 1
        if slot.shelved_passes >= PROBE_EVERY:  # keep the estimate honest: probe now and then
            if self._catch_up_s(slot, n_hist, curve) > PROBE_CATCHUP_STEPS * curve.cost(1):
                return 0  # the probe would cost more than it could tell
            slot.shelved_passes = 0
            return min(2, max_k)
        return 0

    def _catch_up_s(self, slot: DrafterSlot, n_hist: int, curve: CostCurve) -> float:
        """Seconds a model drafter would spend taking in the history it missed: its lag at the
        target's prefill speed scaled by how much cheaper its tokens are (0 when unknown)."""
        held = getattr(slot.drafter, "kv", None)
        if held is None or self.prefill_s_per_token <= 0:
            return 0.0
        lag = max(0, n_hist - len(held))
        return lag * self.prefill_s_per_token * min(1.0, slot.cost() / curve.cost(1))


def _observe(curve: CostCurve, n: int, seconds: float, pending: tuple[int, float] | None) -> tuple[int, float] | None:
    """Feed one pass's time to the curve; returns the pass now waiting, if any.

    A verify pass is charged what it makes the single-row step after it pay beyond the
    curve's single step (on a CUDA build that step re-captures the graph llama.cpp replays
    for repeated single tokens), and that step then says nothing about the single-row cost.
    Without this the penalty would land on the plain steps and every window would look
    cheap. The charge is not clamped at zero, so on a CPU, where there is no penalty, it is
    noise around nothing.
    """
    if pending is not None:
        if n == 1:
            curve.observe(pending[0], pending[1] + seconds - curve.cost(1))
            return None
        curve.observe(*pending)
    if n > 1:
        return n, seconds
    curve.observe(1, seconds)
    return None


def _cut(d: Draft, k: int) -> Draft:
    if len(d.tokens) <= k:
        return d
    probs = d.probs[:k] if d.probs is not None else None
    return Draft(d.tokens[:k], d.source, probs, d.confidence, d.resync)


def run(
    target: Target,
    model: TokenModel,
    prompt: Sequence[int],
    request: GenerateRequest,
    spec: SpecConfig,
    speculator: Speculator,
    emit: Callable[[EngineEvent], None],
    cancel: CancelToken | None = None,
    ceiling_tok_s: float = 0.0,
    clock: Callable[[], float] = time.perf_counter,
) -> DoneEvent:
    """clock: where every duration comes from (engine.simulate replays the loop in virtual time)."""
    t_start = clock()
    st = LoopState(prompt_tokens=len(prompt))
    sampler = Sampler(request.sampling)
    mode = "greedy" if request.sampling.greedy else "sampled"
    stream = TextStream(request.stop)
    out: list[int] = []
    emitted = 0
    finish = ""
    last_stats = t_start
    shadow: Shadow | None = None  # a proposal the policy did not verify, checked by plain passes
    pending: tuple[int, float] | None = None  # a verify pass waiting for the cost it adds to the next step

    def stats(now: float) -> GenStats:
        return GenStats(
            prompt_tokens=st.prompt_tokens,
            reused_tokens=st.reused,
            completion_tokens=len(out),
            prefill_s=st.prefill_s,
            decode_s=st.decode_s,
            wall_s=now - t_start,
            verify_passes=st.passes,
            drafted=dict(st.drafted),
            accepted=dict(st.accepted),
            accept_by_pos=tuple(a / r for a, r in zip(st.acc_pos, st.reached, strict=False) if r),
            ceiling_tok_s=ceiling_tok_s,
            near_tie_divergences=st.near_ties,
            emitted_tokens=emitted,
        )

    if len(prompt) >= target.n_ctx:
        now = clock()
        return DoneEvent("", (), "error", stats(now), error=f"prompt of {len(prompt)} tokens does not fit the context of {target.n_ctx}")

    logits, st.reused = target.prefill(prompt)
    hist = list(prompt)
    new = [sampler.sample(logits, hist)]
    st.passes = 1
    t_decode = clock()
    st.prefill_s = t_decode - t_start
    if len(prompt) - st.reused >= 64:  # long enough to say what a token of prefill costs
        speculator.prefill_s_per_token = st.prefill_s / (len(prompt) - st.reused)

    while True:
        for t in new:
            emitted += 1
            if model.is_eog(t):
                finish = "stop"
                break
            out.append(t)
            hist.append(t)
            text = stream.feed(model.piece(t))
            if stream.hit:
                finish = "stop"
                if text:
                    emit(TokenEvent(text, (t,)))
                break
            if text:
                emit(TokenEvent(text, (t,)))
            if len(out) >= request.max_tokens:
                finish = "length"
                break
        if finish:
            break
        now = clock()
        if now - last_stats >= STATS_INTERVAL_S:  # a running snapshot, after this pass's tokens
            last_stats = now
            st.decode_s = now - t_decode
            emit(StatsEvent(stats(now)))
        if cancel is not None and cancel.cancelled:
            finish = "cancelled"
            break
        room = target.n_ctx - len(target.kv) - 1
        if room < 0:
            finish = "length"
            break
        draft, bucket = speculator.pick(hist, spec, mode, min(room, request.max_tokens - len(out)))
        if draft is not None and shadow is not None:
            shadow.settle(speculator.acceptance)
            shadow = None
        elif draft is None and shadow is None and spec.adaptive:
            shadow = speculator.unverified
        toks = list(draft.tokens) if draft is not None else []
        k = len(toks)
        t0 = clock()  # the pass is timed from here through verification (host work included)
        rows = target.eval([hist[-1]] + toks, all_logits=k > 0)
        st.passes += 1
        assert rows is not None
        if draft is None:
            new = [sampler.sample(rows[-1], hist)]
            if shadow is not None and shadow.feed(new[0], speculator.acceptance):
                shadow = None
        else:
            verdict = verify(rows, toks, sampler, hist, draft.probs if spec.stochastic_draft else None)
            target.rollback(len(target.kv) - (k - verdict.accepted))
            speculator.acceptance.update(f"{draft.source}:{mode}", bucket, k, verdict.accepted)
            slot = speculator.slots.get(draft.source)
            if slot is not None:
                slot.drafted += k
                slot.accepted += verdict.accepted
            st.record(draft.source, k, verdict.accepted)
            st.near_ties += int(verdict.near_tie)
            new = toks[: verdict.accepted] + [verdict.token]
        pending = _observe(speculator.curve_for(mode), k + 1, clock() - t0, pending)

    if pending is not None:
        speculator.curve_for(mode).observe(*pending)
    tail = stream.finish()
    if tail:
        emit(TokenEvent(tail, ()))
    now = clock()
    st.decode_s = now - t_decode
    final = stats(now)
    emit(StatsEvent(final))
    return DoneEvent(stream.text, tuple(out), finish, final)
