"""engine.sideverify: wide verify passes move the sequence to the other weight layout's context
and narrow ones bring it home; what the loop emits is unchanged by where its passes ran."""

from __future__ import annotations

import numpy as np
import pytest

from engine.decoder import run
from engine.drafters.ngram import NgramDrafter
from engine.policy import Acceptance, CostCurve
from engine.sideprefill import SidePrefill, SideRates
from engine.sideverify import (
    MIN_SAVING,
    SIDE_POINTS,
    STINT_TOKENS,
    SideVerify,
    measure_ratios,
    side_ratios,
    wide_passes,
)
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams
from tests.engine.test_side_prefill import StateCtx

MAIN = {1: 0.036, 8: 0.25, 16: 0.31, 32: 0.52, 41: 0.72}  # a 2-core EPYC's repacked layout
RATIOS = {16: 1.1, 24: 1.05, 32: 0.9, 41: 0.88, 48: 0.9, 64: 0.77}  # its plain layout's, measured alternately


def test_a_wide_pass_moves_when_its_saving_pays_for_the_copies_and_a_narrow_one_never() -> None:
    rule = SideVerify.of(MAIN, RATIOS, copy_s=8e-6)
    assert rule.go(41, 1500)  # 86 ms saved against 2 x 1.5 x 12 ms of copies
    assert not rule.go(41, 10_000)  # a long sequence: the copies cost more than the pass saves
    assert not rule.go(16, 100)  # dearer on the side
    assert not rule.go(8, 100) and not rule.go(1, 0)  # narrower than anything measured there
    assert rule.stay(41) and rule.stay(32) and not rule.stay(16) and not rule.stay(1)


def test_the_window_choice_sees_the_cheaper_layout_and_a_share_of_the_copies() -> None:
    rule = SideVerify.of(MAIN, RATIOS, copy_s=8e-6)
    eff = rule.effective(MAIN)
    assert eff[1] == MAIN[1] and eff[8] == MAIN[8] and eff[16] == MAIN[16]  # narrow: the decode layout
    assert eff[41] == pytest.approx(0.72 * 0.88 + STINT_TOKENS * 8e-6)
    assert 64 in eff and eff[64] < CostCurve(MAIN).cost(64)  # a width measured only on the side
    assert SideVerify.of(MAIN, RATIOS, copy_s=1.0).effective(MAIN) == MAIN  # copies too dear: nothing moves


def _eager() -> SideVerify:
    """Every pass of two rows or more is cheaper on the side, and copies are almost free."""
    return SideVerify.of({1: 1.0, 64: 64.0}, {2: 0.5, 64: 0.5}, copy_s=1e-9)


def test_the_sequence_moves_to_the_side_for_a_wide_pass_and_home_for_a_narrow_one() -> None:
    main, side = StateCtx("main"), StateCtx("side")
    t = Target(main, SidePrefill(side, SideRates(1.0, 1.0, 0.0)), _eager())
    t.prefill([1, 2, 3])
    assert main.cells == [1, 2, 3] and not t.on_side
    rows = t.eval([4, 5, 6], all_logits=True)
    assert t.on_side and side.cells == [1, 2, 3, 4, 5, 6] and main.cells == [1, 2, 3]
    assert rows is not None and int(np.argmax(rows[-1])) == sum(range(1, 7)) % StateCtx.vocab
    t.rollback(5)  # a rejected draft is rolled back where it was computed
    assert side.cells == [1, 2, 3, 4, 5] and t.kv == [1, 2, 3, 4, 5]
    t.eval([9], all_logits=False)
    assert not t.on_side and main.cells == [1, 2, 3, 4, 5, 9] and t.moves == 2


def test_a_failed_copy_home_keeps_the_sequence_on_the_side_and_loses_nothing() -> None:
    main, side = StateCtx("main"), StateCtx("side")
    t = Target(main, SidePrefill(side, SideRates(1.0, 1.0, 0.0)), _eager())
    t.prefill([1, 2, 3])
    t.eval([4, 5], all_logits=True)
    side.fail_copy = True
    t.eval([6], all_logits=False)  # the copy home fails: the pass runs on the side, moves stop
    assert t.on_side and t.wide is None and side.cells == [1, 2, 3, 4, 5, 6] and t.kv == side.cells
    t.eval([7, 8], all_logits=True)
    assert side.cells[-2:] == [7, 8]
    side.fail_copy = False
    row, reused = t.prefill([1, 2, 3, 4, 5, 6, 7, 8, 10])  # a request boundary brings it home
    assert not t.on_side and main.cells == [1, 2, 3, 4, 5, 6, 7, 8, 10] and reused == 8
    assert int(np.argmax(row)) == sum(main.cells) % StateCtx.vocab


def test_a_failed_copy_to_the_side_leaves_the_pass_on_the_decode_context() -> None:
    main, side = StateCtx("main"), StateCtx("side")
    t = Target(main, SidePrefill(side, SideRates(1.0, 1.0, 0.0)), _eager())
    t.prefill([1, 2, 3])
    main.fail_copy = True
    t.eval([4, 5], all_logits=True)
    assert not t.on_side and main.cells == [1, 2, 3, 4, 5] and side.cells == []


class PeriodicCtx(StateCtx):
    """Next token = the one PERIOD back, bumped now and then: long drafts that mostly hold."""

    PERIOD = 23

    def decode(self, tokens, pos0, *, all_logits):
        assert pos0 == len(self.cells), f"{self.name}: decode at {pos0} over {len(self.cells)} cells"
        rows = []
        for t in tokens:
            self.cells.append(int(t))
            n = len(self.cells)
            nxt = (
                (self.cells[n - self.PERIOD] + (1 if n % 41 == 0 else 0)) % self.vocab
                if n >= self.PERIOD
                else n % self.vocab
            )
            row = np.zeros(self.vocab, dtype=np.float32)
            row[nxt] = 4.0
            rows.append(row)
        self.decoded += len(tokens)
        return np.stack(rows if all_logits else rows[-1:])


class Vocab:
    def piece(self, token: int) -> bytes:
        return b"x"

    def is_eog(self, token: int) -> bool:
        return False


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_the_loop_emits_the_same_tokens_wherever_its_passes_ran(temperature: float) -> None:
    prompt = [(i * 7) % 50 for i in range(3 * PeriodicCtx.PERIOD)]
    req = GenerateRequest(
        tuple(prompt), max_tokens=200, sampling=SamplingParams(temperature=temperature, seed=3)
    )
    outs = {}
    for wide in (None, _eager()):
        main, side = PeriodicCtx("main"), PeriodicCtx("side")
        target = Target(main, SidePrefill(side, SideRates(1.0, 1.0, 0.0)), wide)
        sp = Speculator(
            CostCurve({1: 1.0, 2: 1.05, 64: 1.5}),
            {"ngram": DrafterSlot(NgramDrafter(), lookup=True)},
            Acceptance(),
        )
        done = run(target, Vocab(), prompt, req, SpecConfig(drafters=("ngram",)), sp, lambda _e: None)
        assert done.error is None and len(done.token_ids) == 200
        live = side if target.on_side else main
        assert target.kv == live.cells  # the live context holds exactly what the target says
        outs[wide is not None] = (list(done.token_ids), target.moves, side.decoded)
    assert outs[True][0] == outs[False][0]
    assert outs[True][1] >= 2 and outs[True][2] > 0  # passes did run on the side, and came home
    assert outs[False][1] == 0 and outs[False][2] == 0


def test_the_side_ratios_are_measured_once_and_kept_per_layout_and_curve_version() -> None:
    main, side = PeriodicCtx("main"), PeriodicCtx("side")
    prof: dict = {"verify_curve": {str(k): v for k, v in MAIN.items()}}
    rule, changed = wide_passes(True, prof, main, side, "repacked", 7, StateCtx.vocab, 8e-6)
    assert changed and rule is not None and set(side_ratios(prof, "repacked", 7) or {}) == set(SIDE_POINTS)
    assert main.cells == [] and side.cells == []  # both caches left empty
    again, changed = wide_passes(None, prof, main, side, "repacked", 7, StateCtx.vocab, 8e-6)
    assert not changed
    assert (
        side_ratios(prof, "plain", 7) is None and side_ratios(prof, "repacked", 8) is None
    )  # another layout or curve: measured again
    assert wide_passes(False, prof, main, side, "repacked", 7, StateCtx.vocab, 8e-6) == (None, False)
    assert wide_passes(None, prof, main, None, "repacked", 7, StateCtx.vocab, 8e-6) == (None, False)


def test_a_real_context_pair_gives_the_same_rows_wherever_the_sequence_lives(tmp_path) -> None:
    from engine import backend
    from tests.engine.tinymodel import write_tiny_model

    path = str(write_tiny_model(tmp_path / "tiny.gguf", vocab=300, byte_fallback=True))
    backend.init()
    models = [backend.Model(path, gpu_layers=0, extra_buffers=eb) for eb in (True, False, True)]
    ctxs = [backend.Context(m, n_ctx=256, n_batch=64, threads=1) for m in models]
    try:
        moving = Target(ctxs[0], SidePrefill(ctxs[1], SideRates(1.0, 1.0, 0.0)), _eager())
        still = Target(ctxs[2])
        prompt = [(i * 13) % 290 + 5 for i in range(40)]
        moving.prefill(prompt)
        still.prefill(prompt)
        for toks in ([7, 8, 9, 10], [11], [12, 13, 14], [15]):  # wide, narrow, wide, narrow
            a = moving.eval(toks, all_logits=True)
            b = still.eval(toks, all_logits=True)
            assert a is not None and b is not None
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
        assert moving.moves == 4 and not moving.on_side
    finally:
        for c in ctxs:
            c.close()
        for m in models:
            m.close()


def test_a_width_the_side_saves_less_than_the_minimum_on_never_moves_nor_looks_cheaper() -> None:
    close = {n: 1.0 - MIN_SAVING / 2 for n in RATIOS}  # cheaper on the side, but within a CPU's wander
    rule = SideVerify.of(MAIN, close, copy_s=1e-9)
    assert not any(rule.go(n, 100) for n in range(1, len(rule.main)))
    assert rule.effective(MAIN) == MAIN
    clear = SideVerify.of(MAIN, {**close, 41: 1.0 - 2 * MIN_SAVING}, copy_s=1e-9)
    assert clear.go(41, 100) and not clear.go(16, 100)


class TimedCtx(StateCtx):
    """A context whose passes advance a shared fake clock: ``costs[i]`` is the i-th pass's seconds."""

    def __init__(self, name: str, clock: list[float], costs) -> None:
        super().__init__(name)
        self.clock, self.costs = clock, costs

    def decode(self, tokens, pos0, *, all_logits):
        self.clock[0] += next(self.costs)
        return super().decode(tokens, pos0, all_logits=all_logits)


def test_the_side_ratio_is_the_median_of_back_to_back_pairs_so_one_lucky_pass_does_not_decide() -> None:
    clock = [0.0]
    # the side is 5% dearer in every round but one, where a burst of interference on the decode
    # context made its pass look twice as dear (the fastest-of-each rule read that round's side
    # time against another round's decode time and called the side cheaper)
    main_costs = iter([1.0] * 10_000)
    n_points = 2
    side_seq = [1.05] * 10_000
    side_seq[1 + n_points] = 0.5  # one lucky side pass in the first kept round
    main, side = TimedCtx("main", clock, main_costs), TimedCtx("side", clock, iter(side_seq))
    ratios = measure_ratios(main, side, StateCtx.vocab, points=(16, 64), repeats=5, clock=lambda: clock[0])
    assert ratios == {16: pytest.approx(1.05), 64: pytest.approx(1.05)}
    assert main.cells == [] and side.cells == []


def test_ratios_saved_by_another_measuring_method_are_measured_again() -> None:
    prof: dict = {
        "verify_curve": {str(k): v for k, v in MAIN.items()},
        "side_verify": {"main_layout": "repacked", "version": 7, "ratios": {"64": 0.5}},
    }
    assert side_ratios(prof, "repacked", 7) is None
    main, side = PeriodicCtx("main"), PeriodicCtx("side")
    _, changed = wide_passes(None, prof, main, side, "repacked", 7, StateCtx.vocab, 8e-6)
    assert changed and side_ratios(prof, "repacked", 7) is not None


def test_a_real_context_pair_copies_both_ways_through_one_buffer(tmp_path) -> None:
    from engine import backend
    from tests.engine.tinymodel import write_tiny_model

    path = str(write_tiny_model(tmp_path / "tiny.gguf", vocab=300, byte_fallback=True))
    backend.init()
    models = [backend.Model(path, gpu_layers=0, extra_buffers=eb) for eb in (True, False)]
    main, side = (backend.Context(m, n_ctx=256, n_batch=64, threads=1) for m in models)
    try:
        rows = main.decode(list(range(10, 40)), 0, all_logits=False)
        assert rows is not None
        want = np.array(rows[-1])  # the rows are a view of llama.cpp's buffer: the next decode overwrites it
        assert main.copy_seq_to(side) and side.copy_seq_to(main)
        assert main._state_buf is side._state_buf  # the way home reused the buffer the way out filled
        main.truncate(29)
        again = main.decode([39], 29, all_logits=False)  # the last token again, on the KV that went round
        assert again is not None and np.allclose(again[-1], want, atol=1e-4)
    finally:
        main.close()
        side.close()
