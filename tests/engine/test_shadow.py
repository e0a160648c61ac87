"""A lookup drafter's proposals that the policy does not verify are checked against the plain
passes that follow, so a shelved drafter's acceptance keeps learning for free."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.decoder import run
from engine.drafters.base import Draft
from engine.policy import Acceptance, CostCurve
from engine.shadow import Shadow
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import EARLY_TOKENS, Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams

V = 50


def test_feed_records_the_matched_prefix_and_the_first_miss() -> None:
    acc = Acceptance(prior=0.5, prior_weight=0.0, decay=1.0, position_weight=0.0)  # the raw counts
    sink = Speculator(CostCurve({1: 1.0}), {}, acc)
    s = Shadow("ngram:greedy", 3, (7, 8, 9))
    assert not s.feed(7, sink) and not s.feed(8, sink)
    assert s.feed(4, sink)  # position 2 missed
    assert acc.rates("ngram:greedy", 3, 3) == [1.0, 1.0, 0.0]
    s = Shadow("ngram:greedy", 3, (7, 8))
    assert not s.feed(7, sink) and s.feed(8, sink)  # all of it emitted
    assert acc.rates("ngram:greedy", 3, 3)[:2] == [1.0, 1.0]
    s = Shadow("ngram:greedy", 2, (5, 6, 7))
    s.feed(5, sink)
    s.settle(sink)  # a verify pass comes: what plain passes showed so far counts
    assert acc.rates("ngram:greedy", 2, 1) == [1.0]
    Shadow("ngram:greedy", 1, (5,)).settle(sink)  # nothing seen: nothing recorded
    assert acc.rates("ngram:greedy", 1, 1) == [0.5]


def test_a_long_matching_proposal_is_credited_as_it_goes_and_each_position_counts_once() -> None:
    from engine.shadow import CREDIT_EVERY

    acc = Acceptance(prior=0.5, prior_weight=1.0, decay=1.0)
    sink = Speculator(CostCurve({1: 1.0}), {}, acc)
    key = "ngram:greedy"
    toks = tuple(range(100, 100 + 3 * CREDIT_EVERY))
    s = Shadow(key, 5, toks)
    for t in toks[:CREDIT_EVERY - 1]:
        assert not s.feed(t, sink)
    assert acc.rates(key, 5, 1) == [0.5]  # nothing credited yet
    assert not s.feed(toks[CREDIT_EVERY - 1], sink)  # still open, but its first positions now count
    assert acc.rates(key, 5, 1) == [0.75]  # (1 + 0.5) / (1 + 1)
    for t in toks[CREDIT_EVERY:2 * CREDIT_EVERY + 2]:
        s.feed(t, sink)
    assert s.feed(7, sink)  # a miss settles it
    once = Acceptance(prior=0.5, prior_weight=1.0, decay=1.0)  # the same outcome recorded in one go
    once.update(key, 5, 2 * CREDIT_EVERY + 3, 2 * CREDIT_EVERY + 2)
    n = 3 * CREDIT_EVERY
    assert acc.rates(key, 5, n) == once.rates(key, 5, n)  # each position counted once, the miss included


class CountingCtx:
    """A model whose next token is always (last + 1) % V."""

    n_ctx = 4096

    def __init__(self) -> None:
        self.rows = 0

    def decode(self, tokens: Sequence[int], pos0: int, *, all_logits: bool) -> np.ndarray:
        out = np.zeros((len(tokens), V), dtype=np.float32)
        for i, t in enumerate(tokens):
            out[i, (t + 1) % V] = 10.0
        self.rows += len(tokens)
        return out if all_logits else out[-1:]

    def truncate(self, pos: int) -> None:
        pass


class Vocab:
    def piece(self, token: int) -> bytes:
        return b"x"

    def is_eog(self, token: int) -> bool:
        return False


class Oracle:
    """A free drafter that is always right, but whose buckets start out distrusted."""

    name = "ngram"

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        return Draft(tuple((history[-1] + 1 + i) % V for i in range(max_len)), self.name, confidence=2)

    def reset(self) -> None:
        pass


class Wrong(Oracle):
    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        return Draft(tuple((history[-1] + 2 + i) % V for i in range(max_len)), self.name, confidence=2)


def _run(drafter, prior: float):
    curve = CostCurve({1: 1.0, 2: 1.5, 4: 2.2, 8: 3.5, 16: 4.0})
    sp = Speculator(curve, {"ngram": DrafterSlot(drafter)}, Acceptance(prior=prior))
    req = GenerateRequest((1, 2, 3), max_tokens=200, sampling=SamplingParams(temperature=0.0))
    done = run(Target(CountingCtx()), Vocab(), [1, 2, 3], req, SpecConfig(drafters=("ngram",)), sp, lambda _e: None)
    assert list(done.token_ids) == [(3 + 1 + i) % V for i in range(200)]  # the output is plain decoding's
    return done.stats


def test_a_distrusted_free_drafter_earns_its_windows_from_plain_passes() -> None:
    # the prior alone would keep it plain for good (no probe passes for free drafters)
    # (two settled shadows, about 130 tokens, before its windows open: the prior is not washed out
    # by counting the same evidence at every position)
    st = _run(Oracle(), prior=0.05)
    assert st.verify_passes < 150 and st.accepted["ngram"] > 50


def test_a_trusted_free_drafter_that_misses_is_shelved_and_stays_shelved() -> None:
    st = _run(Wrong(), prior=0.9)
    assert st.drafted.get("ngram", 0) < 40  # a few passes to learn, then plain
    assert st.verify_passes > 195


def test_a_window_held_short_by_a_bad_position_grows_once_its_bonus_tokens_show_that_position_right() -> None:
    # position 2 once failed five times (a copy that broke there): windows of 2 never reach it again,
    # but each one's bonus token is the target's verdict on the proposal's token there
    acc = Acceptance(prior=0.9)
    for _ in range(5):
        acc.update("ngram:greedy", 1, 3, 2)
    curve = CostCurve({1: 1.0, 2: 1.5, 4: 2.2, 8: 3.5, 16: 4.0})
    sp = Speculator(curve, {"ngram": DrafterSlot(Oracle())}, acc)
    sp.saw(EARLY_TOKENS)  # past a reply's first tokens, where a window must expect more
    assert sp._window(sp.slots["ngram"], "ngram:greedy", 1, 16, SpecConfig(drafters=("ngram",)), "greedy", []) == 2
    assert acc.rates("ngram:greedy", 1, 3)[2] < 0.5
    req = GenerateRequest((1, 2, 3), max_tokens=200, sampling=SamplingParams(temperature=0.0))
    # a still clock: the curve keeps its shape (this toy model's passes take microseconds)
    done = run(Target(CountingCtx()), Vocab(), [1, 2, 3], req, SpecConfig(drafters=("ngram",)), sp, lambda _e: None,
               clock=lambda: 0.0)
    assert list(done.token_ids) == [(3 + 1 + i) % V for i in range(200)]
    assert max(done.stats.pass_rows) > 8  # windows grew past the position that once failed
    assert acc.rates("ngram:greedy", 1, 3)[2] > 0.6


def test_the_host_time_between_passes_is_reported_apart_and_adds_up() -> None:
    ticks = iter(range(10_000))
    sp = Speculator(CostCurve({1: 1.0, 2: 1.5, 4: 2.2}), {"ngram": DrafterSlot(Oracle())}, Acceptance(prior=0.9))
    req = GenerateRequest((1, 2, 3), max_tokens=40, sampling=SamplingParams(temperature=0.0))
    # a clock that moves one second per reading: each pass reads it once before choosing its window and once after
    done = run(Target(CountingCtx()), Vocab(), [1, 2, 3], req, SpecConfig(drafters=("ngram",)), sp, lambda _e: None,
               clock=lambda: float(next(ticks)))
    st = done.stats
    assert st.draft_s == st.verify_passes - 1 > 0  # every decode pass, not the prefill's
    assert st.draft_s < st.decode_s and (st + st).draft_s == 2 * st.draft_s
    assert st.to_dict()["draft_s"] == st.draft_s


class _Copy:
    """A free drafter proposing the same stretch of a copy, with a 16-token context match (bucket 4)."""

    name = "ngram"

    def __init__(self, tokens: tuple[int, ...]) -> None:
        self.tokens = tokens

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        return Draft(self.tokens[:max_len], self.name, confidence=16)

    def reset(self) -> None:
        pass


def test_a_copy_followed_for_a_while_is_judged_by_its_bucket_at_the_position_it_reached() -> None:
    acc = Acceptance()
    for _ in range(20):
        acc.update("ngram:greedy", 6, 1, 0)  # resumed copies often miss their first token...
    for _ in range(10):
        acc.update("ngram:greedy", 6, 63, 63)  # ...and those that do not run on
    src = tuple(range(100, 200))
    cpu = CostCurve({1: 1.0, 2: 1.9, 4: 3.2, 8: 8.0, 16: 9.5, 32: 13.75, 64: 19.3})
    sp = Speculator(cpu, {"ngram": DrafterSlot(_Copy(src[20:83]))}, acc)
    spec = SpecConfig(drafters=("ngram",))
    assert sp.pick([1], spec, "greedy", 63)[0] is None  # a 16-token match on its prior alone does not pay here
    assert sp.pick([1], spec, "greedy", 63, Shadow("ngram:greedy", 6, src[10:73]))[0] is None  # nor position 0
    d, b = sp.pick([1], spec, "greedy", 63, Shadow("ngram:greedy", 6, src[10:73], matched=10, credited=10))
    assert d is not None and b == 6 and sp.offset == 10 and len(d.tokens) >= 16 and sp.proposal == src[20:83]
    # another copy, or a 2-7-token match that ran on (a phrase quoted in prose), is not followed
    assert sp.pick([1], spec, "greedy", 63, Shadow("ngram:greedy", 6, (7,) * 63, matched=10))[0] is None
    assert sp.pick([1], spec, "greedy", 63, Shadow("ngram:greedy", 2, src[10:73], matched=10))[0] is None


def test_a_followed_copy_with_no_evidence_in_its_bucket_opens_a_window_on_its_own_run() -> None:
    # a reply's first resumed copy: the resync bucket holds nothing yet, so its prior (0.7) alone
    # paid for no window on a CPU's curve, and plain steps ran along a 48-token match until a
    # shadow's credit came in; six tokens of the proposal already matched count for it
    src = tuple(range(100, 200))
    cpu = CostCurve({1: 1.0, 2: 1.92, 4: 2.63, 5: 3.43, 8: 5.85, 16: 8.55, 28: 13.36, 32: 15.2, 64: 30.6})
    sp = Speculator(cpu, {"ngram": DrafterSlot(_Copy(src[16:80]))}, Acceptance())
    spec = SpecConfig(drafters=("ngram",))
    assert sp.pick([1], spec, "greedy", 63, Shadow("ngram:greedy", 6, src[10:74], matched=1))[0] is None
    d, b = sp.pick([1], spec, "greedy", 63, Shadow("ngram:greedy", 6, src[10:74], matched=6))
    assert d is not None and b == 6 and sp.offset == 6 and d.tokens == src[16:16 + len(d.tokens)]
    assert sp.rates_from("ngram:greedy", 6, 6, 4) > sp.rates_from("ngram:greedy", 6, 1, 4) > sp.acceptance.rates("ngram:greedy", 6, 4)


def test_a_window_continuing_a_followed_copy_is_recorded_at_its_positions_and_followed_on() -> None:
    sink = Acceptance()
    sp = Speculator(CostCurve({1: 1.0, 2: 1.5, 4: 2.2, 8: 3.5, 16: 4.0}), {"ngram": DrafterSlot(Oracle())}, sink)
    sp.settle("ngram:greedy", 6, 10 + 4, 10 + 2, start=10, given=10)
    c = sink._c[("ngram:greedy", 6)]
    assert c.reached[:10] == [0.0] * 10 and c.reached[10:14] == [1.0, 1.0, 1.0, 0.0] and c.accepted[10:13] == [1.0, 1.0, 0.0]
    cal = sp.calibration["ngram:greedy"]
    assert cal.accepted == 2 and 0 < cal.expected <= 4  # what the window was expected to add, not the copy before it


def test_short_matches_learn_apart_in_a_reply_that_is_not_copying() -> None:
    from engine.speculator import COLD

    class Short(_Copy):
        def propose(self, history: Sequence[int], max_len: int) -> Draft:
            return Draft(self.tokens[:max_len], self.name, confidence=4)  # a 4-token match: bucket 2

    sp = Speculator(CostCurve({1: 1.0, 2: 1.5, 4: 2.2, 8: 3.5, 16: 4.0}), {"ngram": DrafterSlot(Short(tuple(range(50))))},
                    Acceptance())
    spec = SpecConfig(drafters=("ngram",))
    for _ in range(30):  # an hour of edits taught bucket 2 that its copies run on
        sp.acceptance.update("ngram:greedy", 2, 40, 40)
    sp.saw(30, 2)  # this reply copies: its short matches are judged by the edits' estimates
    d, b = sp.pick([1], spec, "greedy", 40)
    assert d is not None and b == 2 and len(d.tokens) > 8
    sp.begin([1], spec, "greedy", 100)  # a new reply, prose: nothing proposed in its last tokens
    sp.saw(0, 20)
    d, b = sp.pick([1], spec, "greedy", 40)
    assert d is None and sp.unverified is not None and sp.unverified.bucket == 2 + COLD


def test_a_short_match_opens_no_window_in_the_first_tokens_of_a_reply() -> None:
    from engine.speculator import START_TOKENS

    sp = Speculator(CostCurve({1: 1.0, 2: 1.5, 4: 2.2, 8: 3.5, 16: 4.0}), {"ngram": DrafterSlot(_Copy(tuple(range(50))))},
                    Acceptance())
    spec = SpecConfig(drafters=("ngram",))
    for _ in range(30):
        sp.acceptance.update("ngram:greedy", 4, 40, 40)
    sp.begin([1], spec, "greedy", 100)
    sp.saw(START_TOKENS - 1)
    assert sp.pick([1], spec, "greedy", 40)[0] is None and sp.unverified is not None  # still shadowed, learning
    sp.saw(1)
    d, b = sp.pick([1], spec, "greedy", 40)
    assert d is not None and b == 4


def test_a_long_match_of_the_replys_own_text_learns_apart_from_a_files_copies() -> None:
    from engine.speculator import ECHO

    class Echo(_Copy):
        def propose(self, history: Sequence[int], max_len: int) -> Draft:
            return Draft(self.tokens[:max_len], self.name, confidence=40, echo=True)  # 40 tokens of its own text

    cpu = CostCurve({1: 1.0, 2: 1.92, 4: 2.63, 8: 5.85, 16: 8.55, 32: 15.2, 48: 21.3, 64: 30.6})
    sp = Speculator(cpu, {"ngram": DrafterSlot(Echo(tuple(range(64))))}, Acceptance())
    spec = SpecConfig(drafters=("ngram",))
    for _ in range(40):  # an hour of edits: the top bucket's copies of a file ran on
        sp.acceptance.update("ngram:greedy", 5, 64, 64)
    sp.saw(30, 2)  # new code whose last lines repeated an earlier block
    d, b = sp.pick([1], spec, "greedy", 63)
    # new code repeating itself breaks where the block differs: a 48-row window on the edits'
    # 0.999 cost a served request more than plain; on its own prior it stays short of that
    assert d is not None and b == 5 + ECHO and len(d.tokens) <= 16


def test_a_reply_that_copied_most_of_its_file_still_copies_after_an_inserted_block() -> None:
    from engine.speculator import RECENT_TOKENS

    sp = Speculator(CostCurve({1: 1.0, 2: 1.5, 4: 2.2}), {"ngram": DrafterSlot(Oracle())}, Acceptance())
    sp.saw(200)  # 200 tokens of the file re-emitted
    sp.saw(0, RECENT_TOKENS)  # then a new function: its last 32 tokens all unproposed
    assert sp.copying  # its resumed copy is judged by the copies' estimates, not new code's
    sp.begin([1], SpecConfig(drafters=("ngram",)), "greedy", 100)
    sp.saw(20)
    sp.saw(0, 60)  # new code that began by quoting 20 tokens is not copying
    assert not sp.copying


def test_a_window_in_a_replys_first_tokens_must_expect_to_double_plain_speed() -> None:
    class Resync(_Copy):
        def propose(self, history: Sequence[int], max_len: int) -> Draft:
            return Draft(self.tokens[:max_len], self.name, confidence=11, resync=True)  # a resumed copy

    def fresh() -> Speculator:
        # a resumed copy at 0.8 a token: about 1.17x plain on this curve, a bet a long reply takes
        cpu = CostCurve({1: 1.0, 2: 1.58, 4: 2.53, 8: 4.43, 16: 5.56})
        sp = Speculator(cpu, {"ngram": DrafterSlot(Resync(tuple(range(40))))}, Acceptance(prior=0.8, prior_weight=1e6))
        sp.begin([1], SpecConfig(drafters=("ngram",)), "greedy", 100)
        return sp

    spec = SpecConfig(drafters=("ngram",))
    sp = fresh()
    sp.saw(20)  # a tool call's first 20 tokens, copied from an earlier one: a miss now costs it a tenth
    assert sp.pick([1], spec, "greedy", 40)[0] is None and sp.unverified is not None
    sp = fresh()
    sp.saw(EARLY_TOKENS)
    d, b = sp.pick([1], spec, "greedy", 40)
    assert d is not None and b == 6


def test_a_short_match_that_ran_into_a_copys_longer_match_counts_its_run() -> None:
    from engine.speculator import RUN_MIN

    # a copy resumed after an edit was first proposed on a 2-3-token match (bucket 1, not followed
    # as a copy); the plain steps matched it on while the drafter's own context match grew to 16
    # tokens (bucket 4, whose copies break early as often as not): 28 matched tokens sat out
    src = tuple(range(100, 200))
    cpu = CostCurve({1: 1.0, 2: 2.0, 4: 3.2, 8: 5.1, 16: 6.2, 32: 10.9, 64: 19.4})
    acc = Acceptance()
    for _ in range(20):  # bucket 4: a third of its copies break at once, a third after three tokens
        acc.update("ngram:greedy", 4, 6, 0)
        acc.update("ngram:greedy", 4, 6, 3)
        acc.update("ngram:greedy", 4, 6, 6)
    sp = Speculator(cpu, {"ngram": DrafterSlot(_Copy(src[40:100]))}, acc)
    sp.saw(60, 4)  # the reply copies its file
    spec = SpecConfig(drafters=("ngram",))
    assert sp.pick([1], spec, "greedy", 60)[0] is None  # the bucket's rates alone do not pay on this curve
    short_run = Shadow("ngram:greedy", 1, src[40 - RUN_MIN + 1:100], matched=RUN_MIN - 1)
    assert sp.pick([1], spec, "greedy", 60, short_run)[0] is None  # a few tokens run: still a phrase
    ran = Shadow("ngram:greedy", 1, src[40 - RUN_MIN:100], matched=RUN_MIN)
    d, b = sp.pick([1], spec, "greedy", 60, ran)
    assert d is not None and b == 4 and sp.offset == RUN_MIN and d.tokens == src[40:40 + len(d.tokens)]
    # not another copy's tokens, and not in a reply that is not copying (prose quoting its prompt)
    assert sp.pick([1], spec, "greedy", 60, Shadow("ngram:greedy", 1, (7,) * 80, matched=RUN_MIN + 8))[0] is None
    sp.begin([1], spec, "greedy", 100)
    sp.saw(0, 30)
    assert sp.pick([1], spec, "greedy", 60, ran)[0] is None


def test_a_short_match_that_the_drafter_resumes_as_its_copy_counts_its_run_sooner() -> None:
    from engine.speculator import RESYNC_RUN_MIN, RUN_MIN

    class Resync(_Copy):
        def propose(self, history: Sequence[int], max_len: int) -> Draft:
            return Draft(self.tokens[:max_len], self.name, confidence=5, resync=True)

    src = tuple(range(100, 200))
    cpu = CostCurve({1: 1.0, 2: 2.0, 4: 3.2, 8: 5.1, 16: 6.2, 32: 10.9, 64: 19.4})
    acc = Acceptance()
    for _ in range(20):  # resyncs: a third break at once, a third after three tokens
        acc.update("ngram:greedy", 6, 6, 0)
        acc.update("ngram:greedy", 6, 6, 3)
        acc.update("ngram:greedy", 6, 6, 6)
    spec = SpecConfig(drafters=("ngram",))
    for slot, needed in ((Resync(src[40:100]), RESYNC_RUN_MIN), (_Copy(src[40:100]), RUN_MIN)):
        sp = Speculator(cpu, {"ngram": DrafterSlot(slot)}, acc)
        sp.saw(60, 4)  # the reply copies its file
        if isinstance(slot, Resync):
            assert sp.pick([1], spec, "greedy", 60)[0] is None  # a resync's rates alone do not pay here
        short = Shadow("ngram:greedy", 1, src[40 - needed + 1:100], matched=needed - 1)
        assert sp.pick([1], spec, "greedy", 60, short)[0] is None
        ran = Shadow("ngram:greedy", 1, src[40 - needed:100], matched=needed)
        d, _ = sp.pick([1], spec, "greedy", 60, ran)
        assert d is not None and sp.offset == needed
    assert RESYNC_RUN_MIN < RUN_MIN


def test_an_echo_run_counts_in_a_reply_that_copies_its_prompt_more_than_itself() -> None:
    from engine.speculator import ECHO, ECHO_RUN_MIN

    class Echo(_Copy):
        def propose(self, history: Sequence[int], max_len: int) -> Draft:
            return Draft(self.tokens[:max_len], self.name, confidence=16, echo=True)  # the reply's own block

    # an edit's greedy reply looping on a method it just wrote: a 16-31-token match of its own text
    # (echo bucket 24), whose rates new code's repeated blocks taught (they broke at about 13 tokens)
    src = tuple(range(100, 200))
    cpu = CostCurve({1: 1.0, 2: 2.0, 4: 3.2, 8: 5.1, 16: 6.2, 32: 10.9, 64: 19.4})
    acc = Acceptance()
    for _ in range(20):
        acc.update("ngram:greedy", ECHO + 4, 6, 0)
        acc.update("ngram:greedy", ECHO + 4, 6, 3)
        acc.update("ngram:greedy", ECHO + 4, 6, 6)
    spec = SpecConfig(drafters=("ngram",))

    def fresh(copied: int, echoed: int) -> Speculator:
        sp = Speculator(cpu, {"ngram": DrafterSlot(Echo(src[40:100]))}, acc)
        sp.saw(copied)  # proposals of the prompt's text (the file re-emitted)
        sp.saw(echoed, bucket=ECHO + 1)  # ... and of the reply's own
        sp.saw(0, 4)
        return sp

    ran = Shadow("ngram:greedy", ECHO + 1, src[40 - ECHO_RUN_MIN:100], matched=ECHO_RUN_MIN)
    short = Shadow("ngram:greedy", ECHO + 1, src[40 - ECHO_RUN_MIN + 1:100], matched=ECHO_RUN_MIN - 1)
    edit = fresh(300, 100)
    assert edit.copies_prompt and edit.copying
    assert edit.pick([1], spec, "greedy", 60)[0] is None  # the echo bucket's rates alone do not pay
    assert edit.pick([1], spec, "greedy", 60, short)[0] is None
    d, b = edit.pick([1], spec, "greedy", 60, ran)
    assert d is not None and b == ECHO + 4 and edit.offset == ECHO_RUN_MIN and d.tokens == src[40:40 + len(d.tokens)]
    # new code repeating its own blocks is copying too, but only itself: its echoes stay on their rates
    new_code = fresh(20, 300)
    assert new_code.copying and not new_code.copies_prompt
    assert new_code.pick([1], spec, "greedy", 60, ran)[0] is None


def test_new_code_repeating_a_block_of_its_own_opens_a_window_on_a_steep_cpu_curve() -> None:
    from engine.speculator import ECHO

    class Echo(_Copy):
        def propose(self, history: Sequence[int], max_len: int) -> Draft:
            return Draft(self.tokens[:max_len], self.name, confidence=20, echo=True)  # 20 tokens of its own text

    # a 2-core Zen 5's curve (seconds by rows over one row): two rows cost two steps, so only a
    # window that keeps about 0.9 a position pays, and on the bucket prior of a file's 16-31-token
    # copies (0.85) a repeated block went by plain until its match reached 32 tokens
    zen5 = CostCurve({1: 1.0, 2: 1.96, 4: 3.27, 8: 4.89, 16: 6.26, 32: 10.7, 64: 18.3})
    sp = Speculator(zen5, {"ngram": DrafterSlot(Echo(tuple(range(100, 164))))}, Acceptance())
    spec = SpecConfig(drafters=("ngram",))
    sp.begin([1], spec, "greedy", 512)
    sp.saw(0, 40)  # new code: nothing proposed so far
    d, b = sp.pick([1], spec, "greedy", 63)
    assert d is not None and b == ECHO + 4 and len(d.tokens) >= 8
    # a file's copy matched as long, in a reply that is not copying, still waits for evidence
    sp2 = Speculator(zen5, {"ngram": DrafterSlot(_Copy(tuple(range(100, 164))))}, Acceptance())
    sp2.begin([1], spec, "greedy", 512)
    sp2.saw(0, 40)
    assert sp2.pick([1], spec, "greedy", 63)[0] is None
