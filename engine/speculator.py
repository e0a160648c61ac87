"""Speculation state that outlives a request: the drafters, the cost curves and acceptance,
and the choice of what to verify next (``Speculator.pick``)."""

from __future__ import annotations

import copy
import threading
from collections import deque
from collections.abc import Callable, Sequence

from engine.drafters.base import Draft, cut, until_stop
from engine.drafters.model_drafter import common_prefix
from engine.policy import (
    ECHO,
    MAX_WINDOW,
    OPENING_BUCKET,
    REGIME_STRIDE,
    RESYNC_BUCKET,
    SPECULATE_MARGIN,
    TOP_BUCKET,
    Acceptance,
    CostCurve,
    can_pay,
    choose_window,
    confidence_bucket,
    expected_tokens,
)
from engine.requestcal import RequestCalibration
from engine.shadow import Shadow
from engine.slot import DrafterSlot
from engine.spec import SpecConfig

PROBE_EVERY = 64  # passes between exploratory windows of a drafter the policy has shelved, at least
# ... and only as often as its cost (catching its context up, drafting, the wider pass) stays
# under this share of the plain steps since the last one: after sitting out a 1000-token edit
# the 0.5B drafter's catch-up on the 2-core CPU took seconds, and one such probe took an edit
# from 2.6x to 1.8x.
PROBE_SHARE = 0.01
PROBE_WINDOW = 2
IN_STEP_LAG = 8  # a lag this short is taken in by the per-pass sync that drafting's cost includes
# A costly drafter the policy has shelved is asked again only every this many passes: while it
# sits out nothing its choice rests on moves but the curve's slow drift and its own lag (which
# only grows), and asking every pass cost about 30 us of host time a step, a 1-2% loss on a
# GPU's 2 ms steps where nothing was drafted at all.
RECHECK_EVERY = 8
# A new request discounts what a costly drafter accepted before: a long-running server mixes
# workloads (an edit's copy, a tool output, new code) and one's acceptance misleads on the next.
REQUEST_DISCOUNT = 0.5
# Buckets whose proposals are followed along their copy: a resumed copy, an opening one, a match
# of 8-31 tokens. Not 2-7-token matches: one that ran eight tokens (a phrase of the prompt quoted in
# prose) is most of its own evidence for the position after, and windows opened on prose on the GPU.
CHAINED = frozenset({3, 4, RESYNC_BUCKET, OPENING_BUCKET})
# A reply copies (an edit re-emitting its file) or it does not (new code, prose): the same short
# match is a copy's next line in one and a phrase that breaks at once in the other, and estimates
# pooled over both opened wide windows on prose after an hour of edits. So the buckets below
# learn apart in a reply whose last RECENT_TOKENS tokens were mostly not proposed.
RECENT_TOKENS = 32
COPYING_MIN = 8  # proposed tokens a reply needs before it counts as copying
SPLIT = frozenset({1, 2, 3, 4, RESYNC_BUCKET})
COLD = REGIME_STRIDE  # bucket offset of the not-copying counterparts (ECHO, from engine.policy: of the reply's own text)
# A reply most of whose tokens so far were proposals copies whatever its last 32 did (a file
# re-emitted with a function inserted: its resumed copy waited out 20 tokens on cold estimates)
WHOLE_MIN = 64  # reply tokens before its whole share counts
WHOLE_SHARE = 0.7  # share of them that were proposals
START_TOKENS = 16  # a reply's first tokens, in which a short match opens no window
# ...and up to EARLY_TOKENS, one opens a window only where it expects to double plain's speed: an
# agent's tool calls are 20-50-token replies, and a 4-row pass that missed on a resumed copy of an
# earlier call's path cost one of them 7% (CPU) and 13% (H200 curve), a loss no later pass evens out
EARLY_TOKENS = 32
EARLY_MARGIN = 1.0
REPLIES_KEPT = 8  # recent reply lengths; a catch-up at the prefill must pay over a short one of them
# A followed proposal that the output has matched for m tokens: its continuation is estimated as
# (m + RUN_WEIGHT * bucket rate) / (m + RUN_WEIGHT). Copies differ (one resumes a file, another
# was a phrase), and one that has run is likelier the kind that runs on: a resumed copy's first
# resync otherwise waited on the bucket's prior for eight plain steps with a 48-token match ahead.
RUN_WEIGHT = 4.0
# A followed proposal born outside the chained buckets (a 2-7-token match, or one seen before the
# reply copied) that has matched this many tokens counts its run like a followed copy's once the
# drafter's own match is in a chained bucket of a copying reply (fewer: prose-like phrases opened windows)
RUN_MIN = 12
# ... and this many for a run along the reply's own earlier text (a 16-31-token echo match), in a
# reply that has copied its prompt more than itself: an edit whose model loops on a block it just
# wrote (a greedy reply wrote one method body six times) copies like its file; new code's repeated
# blocks broke at about 13 tokens, but there the echoes are the reply's only copies
ECHO_RUN_MIN = 8
RESYNC_RUN_MIN = 4  # ...and this many once the drafter resumes its long copy there (a resync): a phrase is no resync
class Speculator:
    """Long-lived speculation state of one engine: drafters, cost curve, acceptance."""

    def __init__(self, curve: CostCurve, drafters: dict[str, DrafterSlot], acceptance: Acceptance | None = None) -> None:
        self.curve = curve  # as measured at load; each sampling mode refines its own copy
        self.curves: dict[str, CostCurve] = {}
        self.slots = drafters
        self.acceptance = acceptance or Acceptance()
        self.unverified: Shadow | None = None  # the last pick's free proposal it chose not to verify
        self.proposal: tuple[int, ...] = ()  # the last pick's whole proposal, its window cut from the front
        self.offset = 0  # the last pick continues a followed proposal: its bucket positions start here
        self.recent: deque[bool] = deque(maxlen=RECENT_TOKENS)  # this reply's last tokens: each one proposed?
        self.said = self.said_proposed = self.said_copied = 0  # this reply's tokens, its proposals, those not echoes
        self.prefill_s_per_token = 0.0  # the target's, from the last long prefill (0 = not seen)
        self.replies: deque[int] = deque(maxlen=REPLIES_KEPT)  # recent replies' lengths in tokens
        self.calibration: dict[str, RequestCalibration] = {}  # this request's, by acceptance key
        self.is_stop: Callable[[int], bool] | None = None  # this request's end-of-generation tokens

    def curve_for(self, mode: str) -> CostCurve:
        """The cost curve of one sampling mode: a pass's host work (sampling every verified row
        at temperature 0.6 and top-p 0.95 against an argmax) differs by mode, and on a GPU,
        where a pass takes a couple of milliseconds, it is a real part of the pass."""
        c = self.curves.get(mode)
        if c is None:
            c = self.curves[mode] = copy.deepcopy(self.curve)
        return c

    def pick(self, hist: list[int], spec: SpecConfig, mode: str, room: int,
             following: Shadow | None = None) -> tuple[Draft | None, int]:
        """The draft to verify next (or None for a plain pass) and its bucket. ``following``: the
        proposal the output has been matching (a shadow, or the rest of a window accepted whole)."""
        max_k = min(spec.max_window, room)
        self.unverified = None
        self.proposal = ()
        self.offset = 0
        if max_k <= 0:
            return None, 0
        for name in spec.drafters:
            slot = self.slots.get(name)
            if slot is None:
                continue
            key = f"{name}:{mode}"
            if slot.lookup:
                d = until_stop(slot.drafter.propose(hist, max_k), self.is_stop)
                if not d.tokens:
                    continue
                bucket = confidence_bucket(d.confidence, d.resync, d.opening)
                early = len(self.recent) < START_TOKENS
                # a long match of the reply's own text (new code repeating a block) is no file's copy:
                # on the edits' top-bucket rate it opened 48-row windows that broke at 13 tokens
                if bucket in SPLIT or (bucket == TOP_BUCKET and d.echo):
                    bucket += self._regime(d)
                offset = 0
                if (following is not None and following.key == key and bucket % REGIME_STRIDE != TOP_BUCKET
                        and following.leads(d.tokens)):
                    if following.bucket in CHAINED:
                        # the same copy, m tokens on: what follows m matched tokens of a proposal from its
                        # bucket, rather than a short match's bucket (a copy resumed after an edit waited
                        # for a 32-token match before its windows opened)
                        bucket, offset = following.bucket, following.position
                    elif self._run_counts(bucket, following.matched):
                        offset = following.position
                # a reply's first tokens risk no window on a short match: which kind of reply it is
                # (a tool call, a file, prose) is not known yet, and a failed pass there costs a
                # short reply a tenth of its time
                k = 0 if early and offset == 0 and bucket % REGIME_STRIDE in SPLIT else self._window(
                    slot, key, bucket, len(d.tokens), spec, mode, hist, offset)
                if k > 0:
                    self.proposal, self.offset = d.tokens, offset
                    return cut(d, k), bucket
                if self.unverified is None:
                    self.unverified = Shadow(key, bucket, tuple(d.tokens))
                continue
            if slot.quiet.get(mode, 0) > 0:
                slot.quiet[mode] -= 1
                slot.shelved_passes += 1  # probes keep their schedule
                continue
            k = self._window(slot, key, 0, max_k, spec, mode, hist)
            if k > 0:
                d = until_stop(slot.drafter.propose(hist, k), self.is_stop)
                if d.tokens:
                    return d, 0
            elif spec.adaptive:  # next asked in RECHECK_EVERY passes, or when a probe is due
                left = PROBE_EVERY - 1 - slot.shelved_passes
                slot.quiet[mode] = min(RECHECK_EVERY - 1, left) if left > 0 else RECHECK_EVERY - 1
        return None, 0

    def prepare(self, prompt: Sequence[int], spec: SpecConfig) -> Callable[[], None]:
        """Start the lookup drafters taking in ``prompt`` beside the target's prefill (llama.cpp's
        call releases the GIL, and on a GPU the host thread only waits in it); returns the join,
        to call once the prefill is done. Without this the request's first proposal indexes the
        new turn, which on a GPU cost more than the steps of a short reply."""
        takers = [take for name in spec.drafters if (slot := self.slots.get(name)) is not None and slot.lookup
                  and (take := getattr(slot.drafter, "take_in", None)) is not None]
        if not takers or spec.max_window <= 0:
            return _nothing

        def run() -> None:
            for take in takers:
                take(prompt)

        t = threading.Thread(target=run, name="tau-take-in", daemon=True)
        t.start()
        return t.join

    def begin(self, hist: list[int], spec: SpecConfig, mode: str, max_tokens: int,
              is_stop: Callable[[int], bool] | None = None) -> None:
        """A new request, its prompt prefilled (``is_stop``: its end-of-generation tokens, past
        which no draft is verified): discount costly drafters' old acceptance, and
        catch up with the prompt those worth drafting with, when what they would save over a
        short reply (the shortest quarter of the recent ones; at most max_tokens) pays for it
        twice over: a server mixes 25-token tool calls with whole files, and the catch-up is
        paid up front. It then shows as time to first token, not as a surprise in the first pass."""
        self.calibration = {}
        self.is_stop = is_stop
        self.recent.clear()
        self.said = self.said_proposed = self.said_copied = 0
        curve = self.curve_for(mode)
        t1 = curve.cost(1)
        for name in spec.drafters:
            slot = self.slots.get(name)
            if slot is None or slot.lookup:
                continue
            self.acceptance.discount(f"{name}:", REQUEST_DISCOUNT)
            slot.shelved_passes = 0  # a probe's budget is a share of this request's own passes
            slot.quiet.clear()  # a new request: ask at once
            catch_up = getattr(slot.drafter, "catch_up", None)
            if catch_up is None:
                continue
            if spec.adaptive:
                if slot.guard(mode).losing:
                    continue
                k = min(spec.max_window, 16)
                choice = choose_window(curve, self.acceptance.rates(f"{name}:{mode}", 0, k), k, slot.cost())
                if choice.k == 0:
                    continue
                short = sorted(self.replies)[len(self.replies) // 4] if self.replies else 0
                saving = min(short, max_tokens) * t1 * (1.0 - 1.0 / choice.gain)
                if self._catch_up_s(slot, hist, curve) > 0.5 * saving:
                    continue
            catch_up(hist)

    def settle(self, key: str, bucket: int, drafted: int, accepted: int, proposed: int = 0, start: int = 0,
               given: int = 0) -> None:
        """A draft's outcome (verified, or checked by a shadow): the acceptance estimates learn it,
        and this request's calibration sets it beside what they expected of the ``proposed``
        tokens (default: ``drafted``) before learning it. ``start``: positions before it were
        credited already (a shadow's interim credit); only a settled outcome is calibrated. ``given``:
        positions before it were matched before the proposal was judged (it continues a followed
        one), so they are not what the estimates expected of it."""
        n = proposed or drafted
        slot = self.slots.get(key.partition(":")[0])
        interim = accepted == drafted < n  # all matched so far, the proposal still open
        if n > given and not interim and slot is not None and slot.lookup:  # only lookup windows are calibrated (_window)
            expected = expected_tokens(self.rates_from(key, bucket, given, n - given), n - given) - 1.0
            self.calibration.setdefault(key, RequestCalibration()).record(expected, accepted - given)
        self.acceptance.update(key, bucket, drafted, accepted, start)

    @property
    def started(self) -> bool:
        """The reply is past its first tokens, in which an opening copy is recognised."""
        return len(self.recent) >= START_TOKENS

    @property
    def copying(self) -> bool:
        """Most of the reply's recent tokens were proposals, or most of all its tokens (an edit
        re-emitting its file, an inserted block or not)."""
        if self.said >= WHOLE_MIN and self.said_proposed >= WHOLE_SHARE * self.said:
            return True
        return sum(self.recent) * 2 >= len(self.recent) + COPYING_MIN

    def _run_counts(self, bucket: int, matched: int) -> bool:
        """A short match's followed proposal that has matched ``matched`` tokens and ran into the
        drafter's longer match in ``bucket`` counts its run (a resumed copy sat out 28 matched
        tokens on its bucket's rates): in a chained bucket, or in echo bucket 4 (a 16-31-token match
        of the reply's own text) of a reply that copies its prompt more than itself."""
        if bucket in CHAINED:
            return matched >= (RESYNC_RUN_MIN if bucket == RESYNC_BUCKET else RUN_MIN)
        return bucket == ECHO + 4 and self.copies_prompt and matched >= ECHO_RUN_MIN

    @property
    def copies_prompt(self) -> bool:
        """More of the reply's proposed tokens came from its prompt than from its own earlier text."""
        return 2 * self.said_copied >= self.said_proposed + COPYING_MIN

    def _regime(self, d: Draft) -> int:
        """The bucket offset for where the draft comes from and whether the reply is copying."""
        if d.echo:
            return ECHO
        return 0 if self.copying else COLD

    def saw(self, proposed: int, unproposed: int = 0, bucket: int | None = None) -> None:
        """Tokens of the reply that were (verified or shadowed) proposals, then ones that were not;
        ``bucket``: the proposal's (an echo bucket: proposals of the reply's own earlier text)."""
        self.recent.extend([True] * proposed + [False] * unproposed)
        self.said_proposed += proposed
        if bucket is None or bucket < ECHO:
            self.said_copied += proposed
        self.said += proposed + unproposed

    def end(self, tokens: int) -> None:
        """A reply of ``tokens`` tokens was served."""
        self.replies.append(tokens)

    def record(self, source: str, mode: str, seconds: float, tokens: int) -> None:
        """One pass a costly drafter drafted: its whole time (drafting included) and what it emitted."""
        slot = self.slots.get(source)
        if slot is not None and not slot.lookup:
            slot.guard(mode).record(seconds, tokens, self.curve_for(mode).cost(1))
            slot.quiet.pop(mode, None)  # new evidence: ask again at once

    def rates_from(self, key: str, bucket: int, offset: int, n: int) -> list[float]:
        """Estimates for positions offset..offset+n-1 (past the last estimated position: the last's).
        Past 0, the proposal's own ``offset`` matched tokens count for it beside its bucket's rate."""
        if offset == 0:
            return self.acceptance.rates(key, bucket, n)
        r = self.acceptance.rates(key, bucket, offset + n)[offset:]
        r = r + [r[-1] if r else self.acceptance.rates(key, bucket, MAX_WINDOW)[-1]] * (n - len(r))
        return [(offset + RUN_WEIGHT * x) / (offset + RUN_WEIGHT) for x in r]

    def _window(self, slot: DrafterSlot, key: str, bucket: int, max_k: int, spec: SpecConfig, mode: str,
                hist: list[int], offset: int = 0) -> int:
        if not spec.adaptive:
            return min(spec.fixed_window, max_k)
        curve = self.curve_for(mode)
        rates = self.rates_from(key, bucket, offset, max_k)
        cal = self.calibration.get(key)
        if slot.lookup and cal is not None:
            rates = cal.scaled(rates)
        cost = slot.cost()
        catch = 0.0 if slot.lookup else self._catch_up_s(slot, hist, curve)
        if slot.lookup or not slot.guard(mode).losing:
            # the catch-up is paid by this pass, whatever its window: charged in full
            early = self.said < EARLY_TOKENS and offset == 0 and bucket % REGIME_STRIDE in SPLIT
            choice = choose_window(curve, rates, max_k, cost, fixed_cost=catch,
                                   margin=EARLY_MARGIN if early else SPECULATE_MARGIN)
            if choice.k > 0:
                slot.shelved_passes = 0
                return choice.k
        if slot.lookup:
            return 0  # its unverified proposals are checked against plain passes for free (engine.shadow)
        slot.shelved_passes += 1
        if slot.shelved_passes >= PROBE_EVERY:  # keep the estimate honest: probe now and then
            if cost > 0 and not can_pay(curve, cost, max_k):
                slot.shelved_passes = 0  # even a drafter that predicts well would not pay on this hardware
                return 0
            k = min(PROBE_WINDOW, max_k)
            probe_s = catch + k * cost + curve.cost(k + 1) - curve.cost(1)
            if probe_s > PROBE_SHARE * slot.shelved_passes * curve.cost(1):
                return 0  # not yet: probes may spend only a small share of the time
            slot.shelved_passes = 0
            return k
        return 0

    def _catch_up_s(self, slot: DrafterSlot, hist: list[int], curve: CostCurve) -> float:
        """Seconds a model drafter would spend taking in the history it lacks: its lag (the
        tokens after the prefix its context shares with ``hist``) at its measured catch-up
        speed, else at the target's prefill speed scaled by its cheaper tokens (0 when unknown)."""
        d = slot.drafter
        lag_of = getattr(d, "lag", None)
        if lag_of is not None:
            lag = lag_of(hist)
        else:
            held = getattr(d, "kv", None)
            if held is None:
                return 0.0
            lag = len(hist) - common_prefix(held, hist)
        if lag <= IN_STEP_LAG:
            return 0.0
        per_token = getattr(d, "catch_up_s_per_token", 0.0)
        if not per_token:
            if self.prefill_s_per_token <= 0:
                return 0.0
            per_token = self.prefill_s_per_token * min(1.0, slot.cost() / curve.cost(1))
        return lag * per_token


def _nothing() -> None:
    return None
