"""The decode loop: prefill with prefix reuse, then draft -> verify -> roll back, until done.

Runs on the engine's owner thread. Plain decoding is the same loop with windows of 0.
"""

from __future__ import annotations

import functools
import gc
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ParamSpec, Protocol

import numpy as np

from engine.drafters.base import Draft
from engine.policy import Pending, observe_pass
from engine.rowpool import RowPool
from engine.sampling import Sampler
from engine.shadow import Shadow
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.target import Target
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


class TokenModel(Protocol):
    """What the loop needs from a model: token bytes and end-of-generation ids."""

    def piece(self, token: int) -> bytes: ...

    def is_eog(self, token: int) -> bool: ...


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
    rows: dict[int, int] = field(default_factory=dict)  # decode passes by rows evaluated
    draft_s: float = 0.0
    step_s: float = 0.0

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


P = ParamSpec("P")


def _cycles_paused(fn: Callable[P, DoneEvent]) -> Callable[P, DoneEvent]:
    """Python's cycle collector paused for a generation: a collection mid-generation stalls a
    step (traced on an H200: up to 2.8 ms against 1.8 ms steps, and 25 us a step on average
    where the n-gram index grows), while reference counting frees what the loop drops; cycles
    wait for the end of the generation."""

    @functools.wraps(fn)
    def paused(*args: P.args, **kwargs: P.kwargs) -> DoneEvent:
        was = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was:
                gc.enable()

    return paused


@_cycles_paused
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
    pool: RowPool | None = None,
) -> DoneEvent:
    """clock: where every duration comes from (engine.lab.simulate replays the loop in virtual time).
    pool: threads that prepare a verify pass's rows (engine.rowpool)."""
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
    # with target.overlap a plain step is started before the pick that follows a plain pass; a
    # window that pick chose is followed by the step as a shadow, and the next pass verifies the
    # rest of it: (drafter, window) carried over. Not in the reply's first tokens nor while it
    # copies: there windows follow each other and one a step late sets the reply on another path
    last_plain = True
    carried: tuple[str, int] | None = None
    pending: Pending | None = None  # a verify pass waiting for the cost it adds to the steps after it

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
            pass_rows=dict(st.rows),
            draft_s=st.draft_s,
            step_s=st.step_s,
        )

    if len(prompt) >= target.n_ctx:
        now = clock()
        return DoneEvent("", (), "error", stats(now), error=f"prompt of {len(prompt)} tokens does not fit the context of {target.n_ctx}")

    joined = speculator.prepare(prompt, spec)  # lookup drafters index the prompt beside the prefill
    try:
        logits, st.reused = target.prefill(prompt)
    finally:
        joined()
    if len(prompt) - st.reused >= 64:  # long enough to say what a token of prefill costs
        speculator.prefill_s_per_token = (clock() - t_start) / (len(prompt) - st.reused)
    hist = list(prompt)
    speculator.begin(hist, spec, mode, request.max_tokens, model.is_eog)  # model drafters worth it take in the prompt now
    new = [sampler.sample(logits, hist)]
    st.passes = 1
    t_decode = clock()
    st.prefill_s = t_decode - t_start

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
        limit = min(room, request.max_tokens - len(out))
        if target.overlap and last_plain and carried is None and speculator.started and not speculator.copying:
            t0 = clock()  # the step is timed from its start: the pick runs inside it
            target.submit(hist[-1])
            t_pick = clock()  # draft_s is the pick's own time, not the step's launch before it
            draft, bucket = speculator.pick(hist, spec, mode, limit, shadow)
            st.draft_s += clock() - t_pick
            if draft is not None:  # too late for this step, which checks the window's first token
                if shadow is not None:
                    shadow.settle(speculator)
                shadow = None
                if speculator.proposal:  # the next pass verifies the rest of the window (a lookup's)
                    shadow = Shadow(f"{draft.source}:{mode}", bucket, speculator.proposal, offset=speculator.offset)
                    carried = (draft.source, len(draft.tokens))
                else:  # a model drafter's (its q is for this step's position): the next pick waits for its pass
                    carried = (draft.source, 0)
                draft = None
            elif shadow is None and spec.adaptive:
                shadow = speculator.unverified
            toks, k = [], 0
            whole: tuple[int, ...] = ()
            rows: np.ndarray | None = target.collect()
        else:
            t_pick = clock()  # a model drafter's proposal (and catch-up) counts in its throughput guard
            if carried is not None and shadow is not None and shadow.matched == 1 and carried[1] > 1 and limit > 0:
                # the window the overlapped pick chose, one token on: the step emitted its first token
                # (learnt as one window from its first position, as if verified in one pass)
                rest = shadow.tokens[1:]
                draft, bucket = Draft(rest[: min(carried[1] - 1, limit)], carried[0]), shadow.bucket
                offset, whole, settle_from = shadow.offset + 1, rest, shadow.offset
                shadow = None
            else:
                draft, bucket = speculator.pick(hist, spec, mode, limit, shadow)
                offset = speculator.offset  # a window continuing the followed proposal: its bucket positions start here
                whole, settle_from = speculator.proposal, offset
            carried = None
            if draft is not None and shadow is not None:
                shadow.settle(speculator)
                shadow = None
            elif draft is None and shadow is None and spec.adaptive:
                shadow = speculator.unverified
            toks = list(draft.tokens) if draft is not None else []
            k = len(toks)
            if k and len(whole) > k:  # rows a padded pass evaluates anyway verify more of the proposal
                more = min(target.width(k + 1) - 1, len(whole), limit, spec.max_window)
                if more > k:
                    toks, k = list(whole[:more]), more
            t0 = clock()  # the pass is timed from here through verification (host work included)
            st.draft_s += t0 - t_pick
            rows = target.eval([hist[-1]] + toks, all_logits=k > 0)
        last_plain = draft is None
        st.passes += 1
        st.rows[k + 1] = st.rows.get(k + 1, 0) + 1
        assert rows is not None
        if draft is None:
            new = [sampler.sample(rows[-1], hist)]
            hit = shadow is not None and shadow.tokens[shadow.matched] == new[0]
            speculator.saw(int(hit), int(not hit), shadow.bucket if shadow is not None else None)
            if shadow is not None and shadow.feed(new[0], speculator):
                shadow = None
        else:
            verdict = verify(rows, toks, sampler, hist, draft.probs if spec.stochastic_draft else None, pool)
            target.rollback(len(target.kv) - (k - verdict.accepted))
            # a window accepted whole: its bonus token is the target's verdict on the proposal's next
            # token as a wider pass would have given it (argmax, or a sample from the same p), so that
            # position learns for free and a window the estimates hold short can grow
            past = whole[k] if verdict.accepted == k and len(whole) > k else None
            hit = past is not None and verdict.token == past
            key = f"{draft.source}:{mode}"
            speculator.settle(key, bucket, offset + k + (past is not None), offset + verdict.accepted + hit,
                              start=settle_from, given=settle_from)
            speculator.saw(verdict.accepted + hit, int(not hit), bucket)
            if hit and len(whole) > k + 1 and spec.adaptive:  # the rest of the proposal is followed on
                shadow = Shadow(key, bucket, whole, matched=k + 1, credited=k + 1, offset=offset)
            slot = speculator.slots.get(draft.source)
            if slot is not None:
                slot.drafted += k
                slot.accepted += verdict.accepted
            st.record(draft.source, k, verdict.accepted)
            st.near_ties += int(verdict.near_tie)
            new = toks[: verdict.accepted] + [verdict.token]
        t_end = clock()
        if not k:
            st.step_s += t_end - t0
        if draft is not None:
            speculator.record(draft.source, mode, t_end - t_pick, len(new))
        pending = observe_pass(speculator.curve_for(mode), k + 1, t_end - t0, pending)

    if pending is not None:
        speculator.curve_for(mode).observe(pending[0], pending[1])
    if finish != "cancelled":
        speculator.end(len(out))
    tail = stream.finish()
    if tail:
        emit(TokenEvent(tail, ()))
    now = clock()
    st.decode_s = now - t_decode
    final = stats(now)
    emit(StatsEvent(final))
    return DoneEvent(stream.text, tuple(out), finish, final)
