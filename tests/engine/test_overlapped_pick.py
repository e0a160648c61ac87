"""Plain steps started before the policy's pick (decoder.Target.overlap, on by default with a GPU):
the step is queued on the device, the pick runs on the host meanwhile, and a window that pick
chose is followed by the step as a shadow and verified by the next pass; not in a reply's first
tokens nor while it copies (an edit re-emitting its file), where windows follow each other. Real llama.cpp on the
tiny GGUF for the backend half (on a CPU llama_decode computes at once, so the order is what is
tested, not the overlap), the replay's oracle for the loop."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from engine.decoder import run
from engine.drafters.ngram import NgramDrafter
from engine.lab.simulate import OracleContext, VirtualClock, _Tokens, simulate
from engine.policy import CostCurve
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import START_TOKENS, Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams
from tests.engine.test_padded_passes import PROMPT, Cycling


def test_a_submitted_step_collects_the_row_decode_returns(tiny) -> None:
    _model, ctx = tiny
    ctx.truncate(0)
    ctx.decode(PROMPT, 0, all_logits=False)
    want = np.array(ctx.decode([11], len(PROMPT), all_logits=False))
    ctx.truncate(len(PROMPT))
    ctx.submit(11, len(PROMPT))
    got = np.array(ctx.collect())
    assert got.shape == want.shape == (1, want.shape[1])
    assert np.allclose(got, want, atol=1e-4)
    after = np.array(ctx.decode([6], len(PROMPT) + 1, all_logits=False))  # the step's token is in the cache
    ctx.truncate(len(PROMPT))
    ctx.decode([11], len(PROMPT), all_logits=False)
    assert np.allclose(after, np.array(ctx.decode([6], len(PROMPT) + 1, all_logits=False)), atol=1e-4)


def _generate(ctx, model, *, overlap: bool, drafting: bool, lookup: bool = True):
    ctx.truncate(0)
    slots = {"cycle": DrafterSlot(Cycling(), lookup=lookup)} if drafting else {}
    spec = SpecConfig(drafters=("cycle",) if drafting else (), adaptive=False, fixed_window=3, max_window=16)
    req = GenerateRequest(tuple(PROMPT), max_tokens=30, sampling=SamplingParams(temperature=0.0))
    return run(Target(ctx, overlap=overlap), model, PROMPT, req, spec, Speculator(CostCurve({1: 1.0, 16: 1.0}), slots),
               lambda _e: None)


def test_overlapped_picks_leave_the_output_token_for_token_plains(tiny) -> None:
    model, ctx = tiny
    plain = _generate(ctx, model, overlap=False, drafting=False)
    for overlap in (False, True):
        done = _generate(ctx, model, overlap=overlap, drafting=True)
        assert done.token_ids == plain.token_ids
        assert sum(done.stats.drafted.values()) > 0  # windows were still verified
    sync, over = (_generate(ctx, model, overlap=o, drafting=True) for o in (False, True))
    # every window that followed a plain step opened one token later: no more windows than before
    assert sum(over.stats.drafted.values()) <= sum(sync.stats.drafted.values())


def test_a_model_drafters_window_chosen_beside_a_step_is_drafted_again_and_verified_by_the_next_pass(tiny) -> None:
    model, ctx = tiny
    plain = _generate(ctx, model, overlap=False, drafting=False)
    done = _generate(ctx, model, overlap=True, drafting=True, lookup=False)
    assert done.token_ids == plain.token_ids
    assert sum(done.stats.drafted.values()) > 0  # not dropped pick after pick


class _Logged(OracleContext):
    def __init__(self, *a, log: list[str], **k) -> None:
        super().__init__(*a, **k)
        self.log = log

    def submit(self, token: int, pos: int) -> None:
        self.log.append("submit")
        self._rows = super().decode([token], pos, all_logits=False)  # not logged as a decode call

    def collect(self) -> np.ndarray:
        self.log.append("collect")
        return super().collect()

    def decode(self, tokens: Sequence[int], pos: int, *, all_logits: bool) -> np.ndarray:
        if pos >= len(self.prompt):
            self.log.append(f"decode{len(tokens)}")
        return super().decode(tokens, pos, all_logits=all_logits)


def _copying(overlap: bool) -> tuple[list[str], object]:
    """An output that copies a stretch of its prompt: the overlay's windows pay on it."""
    body = [(i * 37) % 500 + 10 for i in range(300)]
    fresh = [520 + i for i in range(30)]  # new text first: nothing to copy
    prompt, output = [1, 2, 3] + body + [4], [5, 6, 7, 8] + fresh + body[:200] + [9, 9, 9]
    log: list[str] = []
    clock = VirtualClock()
    curve = {1: 1.0, 2: 1.05, 4: 1.1, 8: 1.2, 16: 1.4, 32: 1.8, 64: 2.6}
    ctx = _Logged(prompt, output, 600, CostCurve(dict(curve)), clock, log=log)
    d = NgramDrafter()
    sp = Speculator(CostCurve(dict(curve)), {d.name: DrafterSlot(d, lookup=True)})
    pick = sp.pick

    def logged_pick(*a, **k):
        log.append("pick")
        return pick(*a, **k)

    sp.pick = logged_pick  # type: ignore[method-assign]
    req = GenerateRequest(tuple(prompt), max_tokens=len(output), sampling=SamplingParams(temperature=0.0))
    done = run(Target(ctx, overlap=overlap), _Tokens(), prompt, req, SpecConfig(drafters=(d.name,)), sp,
               lambda _e: None, clock=clock)
    assert list(done.token_ids) == output
    return log, done


def test_the_pick_after_a_plain_step_runs_while_the_next_step_is_on_the_device() -> None:
    log, done = _copying(overlap=True)
    assert log.count("submit") == log.count("collect") > 0
    for i, e in enumerate(log):
        if e == "submit":
            assert log[i + 1] == "pick" and log[i + 2] == "collect"  # submit, pick, collect
    windows = [i for i, e in enumerate(log) if e.startswith("decode") and e != "decode1"]
    assert windows  # windows still opened on the copy
    # once the reply copies, picks wait for their pass again (a window a step late costs more there)
    assert max(i for i, e in enumerate(log) if e == "submit") < windows[0]
    # and in a reply's first tokens, where an opening copy is recognised
    assert log[: 2 * START_TOKENS] == ["pick", "decode1"] * START_TOKENS
    assert done.stats.tau > 3.0
    assert done.stats.draft_s == 0.0  # the picks' own time (none in virtual time), not the steps they overlap
    sync_log, sync = _copying(overlap=False)
    assert "submit" not in sync_log
    assert sync.stats.verify_passes <= done.stats.verify_passes <= sync.stats.verify_passes + 3


def test_the_replay_with_overlapped_picks_stays_within_a_few_passes_of_the_synchronous_one() -> None:
    body = [(i * 53) % 700 + 20 for i in range(400)]
    prompt, output = [1] + body, [2, 3] + body[:150] + [4, 5] + body[160:300]
    curve = {1: 1.0, 2: 1.05, 4: 1.1, 8: 1.2, 16: 1.4, 32: 1.8, 64: 2.6}
    sync, over = (simulate(prompt, output, curve, overlap=o) for o in (False, True))
    assert over.tau > 3.0 and sync.tau > 3.0
    assert over.spec_s <= sync.spec_s * 1.1


def test_overlap_needs_one_context_that_can_start_a_step() -> None:
    class NoSubmit:
        n_ctx = 64

    assert not Target(NoSubmit(), overlap=True).overlap
    ctx = OracleContext([1, 2], [3], 8, CostCurve({1: 1.0}), VirtualClock())
    assert Target(ctx, overlap=True).overlap and not Target(ctx).overlap
    assert not Target(ctx, side=object(), overlap=True).overlap  # type: ignore[arg-type]


def test_the_engine_overlaps_its_picks_where_configured_and_emits_the_same_tokens(tmp_path) -> None:
    from engine.config import EngineConfig
    from engine.local import LocalEngine
    from engine.types import generate
    from tests.engine.tinymodel import write_tiny_model

    model = str(write_tiny_model(tmp_path / "tiny-bytes.gguf", vocab=300, byte_fallback=True))
    outs = []
    for overlap in (None, True):  # None: the default, off on a CPU
        eng = LocalEngine.load(EngineConfig(model_path=model, n_ctx=512, threads=1, cache_dir=str(tmp_path),
                                            log_path=str(tmp_path / "llama.log"), overlap_pick=overlap))
        try:
            assert eng.target.overlap is bool(overlap)
            req = GenerateRequest("a b c d a b c d a b c d a b", max_tokens=40, sampling=SamplingParams(temperature=0.0))
            outs.append(generate(eng, req).token_ids)
        finally:
            eng.close()
    assert outs[0] == outs[1] and len(outs[0]) > 0


def test_the_stats_time_the_single_row_passes_apart() -> None:
    """step_s: the seconds of the passes that evaluated one row (each from launch through its token),
    so a request's mean step can be set beside its plain twin's, whose reply may differ."""
    curve = {1: 1.0, 2: 1.05, 4: 1.1, 8: 1.2, 16: 1.4, 32: 1.8, 64: 2.6}
    for overlap in (False, True):
        _, done = _copying(overlap=overlap)
        st = done.stats
        steps = st.pass_rows[1]
        assert 0 < steps < st.verify_passes - 1  # windows were verified too
        assert st.step_s == steps * curve[1]  # in virtual time each step costs the curve's one row
        wide = sum(n * CostCurve(dict(curve)).cost(rows) for rows, n in st.pass_rows.items() if rows > 1)
        assert st.decode_s == pytest.approx(st.step_s + wide)
        assert (st + st).step_s == 2 * st.step_s and st.to_dict()["step_s"] == st.step_s
