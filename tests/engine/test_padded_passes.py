"""Verify passes padded to fixed widths (what keeps CUDA graph replay alive on a GPU), on a tiny
random-weight GGUF through real llama.cpp on the CPU: the rows asked for are the unpadded
rows, the cache keeps only the real tokens, and the rows the padding evaluates anyway verify
more of the proposal without changing a single output token."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.decoder import run
from engine.drafters.base import Draft
from engine.policy import CostCurve
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams
from engine.widths import fixed_widths, padded_curve, rows_for

PROMPT = [1, 5, 7, 4, 9, 10, 3, 8]  # the tiny vocabulary has 12 tokens


def test_a_padded_pass_returns_the_unpadded_rows_and_keeps_only_its_tokens(tiny) -> None:
    _model, ctx = tiny
    assert [ctx.padded(n) for n in (1, 2, 8, 9)] == [1, 2, 8, 9]  # no widths: nothing padded
    want = []
    for widths in ((), (8,)):
        ctx.pad_table = fixed_widths(widths)
        ctx.truncate(0)
        ctx.decode(PROMPT, 0, all_logits=False)
        rows = np.array(ctx.decode([11, 6, 2], len(PROMPT), all_logits=True))
        nxt = np.array(ctx.decode([6], len(PROMPT) + 3, all_logits=False))  # the padding left no KV behind
        want.append((rows, nxt))
    ctx.pad_table = ()
    (rows0, next0), (rows1, next1) = want
    assert rows1.shape == rows0.shape == (3, rows0.shape[1])
    assert np.allclose(rows1, rows0, atol=1e-3) and np.allclose(next1, next0, atol=1e-3)
    ctx.pad_table = fixed_widths((8, 32))
    assert [ctx.padded(n) for n in (1, 2, 8, 9, 32, 33)] == [1, 8, 8, 32, 32, 33]
    ctx.pad_table = ()


class Cycling:
    """A lookup drafter whose proposals run as long as asked: right or wrong by the history."""

    name = "cycle"

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        h = sum(history)
        return Draft(tuple(3 + (h + i * 7) % 9 for i in range(max_len)), self.name)

    def reset(self) -> None:
        pass


def _generate(ctx, model, widths: tuple[int, ...], drafting: bool):
    ctx.pad_table = fixed_widths(widths)
    ctx.truncate(0)
    slots = {"cycle": DrafterSlot(Cycling(), lookup=True)} if drafting else {}
    spec = SpecConfig(drafters=("cycle",) if drafting else (), adaptive=False, fixed_window=2, max_window=16)
    req = GenerateRequest(tuple(PROMPT), max_tokens=24, sampling=SamplingParams(temperature=0.0))
    done = run(Target(ctx), model, PROMPT, req, spec, Speculator(CostCurve({1: 1.0, 16: 1.0}), slots), lambda _e: None)
    ctx.pad_table = ()
    return done


def test_the_rows_a_padded_pass_evaluates_anyway_verify_more_of_the_proposal(tiny) -> None:
    model, ctx = tiny
    plain = _generate(ctx, model, (), drafting=False)
    short = _generate(ctx, model, (), drafting=True)
    padded = _generate(ctx, model, (8,), drafting=True)
    assert padded.token_ids == short.token_ids == plain.token_ids
    # the policy's window is 2 drafted tokens; padded to 8 rows, the pass verifies 7
    assert max(short.stats.pass_rows) == 3  # (narrower where the reply's end is nearer)
    rows = padded.stats.pass_rows
    assert max(rows) == 8 and rows[8] > sum(v for k, v in rows.items() if 1 < k < 8)  # narrower only near the end
    assert sum(padded.stats.drafted.values()) > sum(short.stats.drafted.values())



def test_fixed_widths_pad_up_to_the_narrowest_that_holds_a_pass_and_the_curve_follows() -> None:
    table = fixed_widths((16, 64))
    assert [rows_for(n, table) for n in (1, 2, 15, 16, 17, 64, 65)] == [1, 16, 16, 16, 64, 64, 65]
    points = {1: 1.0, 2: 3.0, 16: 4.0, 32: 5.0, 64: 7.0}
    assert padded_curve(points, table) == {1: 1.0, 2: 4.0, 16: 4.0, 32: 7.0, 64: 7.0}
