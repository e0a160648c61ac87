"""engine.sideprefill: long prompt additions computed on the other weight layout, copied into
the decode context, and the decode unchanged by it."""

from __future__ import annotations

import numpy as np
import pytest

from engine.sideprefill import ALWAYS, MIN_NEW, SidePrefill, SideRates
from engine.target import Target


class StateCtx:
    """A context whose 'KV cache' is its token list; logits are a function of the whole sequence."""

    n_ctx = 4096
    vocab = 50

    def __init__(self, name: str) -> None:
        self.name = name
        self.cells: list[int] = []
        self.decoded = 0  # tokens computed here
        self.copies_out = 0
        self.fail_copy = False

    def decode(self, tokens, pos0, *, all_logits):
        assert pos0 == len(self.cells), f"{self.name}: decode at {pos0} over {len(self.cells)} cells"
        rows = []
        for t in tokens:
            self.cells.append(int(t))
            row = np.zeros(self.vocab, dtype=np.float32)
            row[sum(self.cells) % self.vocab] = 1.0
            rows.append(row)
        self.decoded += len(tokens)
        return np.stack(rows if all_logits else rows[-1:])

    def truncate(self, pos):
        del self.cells[pos:]

    def clear(self):
        self.cells = []

    def copy_seq_to(self, other) -> bool:
        self.copies_out += 1
        other.clear()
        if self.fail_copy:
            return False
        other.cells = list(self.cells)
        return True


def _expected(prompt) -> int:
    return sum(prompt) % StateCtx.vocab


def test_a_long_prompt_is_computed_on_the_side_and_its_state_lands_in_the_target() -> None:
    main, side = StateCtx("main"), StateCtx("side")
    t = Target(main, SidePrefill(side, ALWAYS))
    prompt = list(range(1, 200))
    row, reused = t.prefill(prompt)
    assert int(np.argmax(row)) == _expected(prompt) and reused == 0
    assert main.decoded == 0 and side.decoded == len(prompt)  # computed on the side only
    assert main.cells == prompt and t.kv == prompt  # ...and the target holds it
    t.eval([7], all_logits=False)  # the decode goes on in the target
    assert main.cells == prompt + [7]


def test_a_short_addition_stays_on_the_target_and_a_longer_one_reuses_what_the_side_holds() -> None:
    main, side = StateCtx("main"), StateCtx("side")
    t = Target(main, SidePrefill(side, ALWAYS))
    p1 = list(range(1, 200))
    t.prefill(p1)
    t.eval([5, 6], all_logits=False)  # the reply
    p2 = p1 + [5, 6] + [9] * (MIN_NEW - 1)
    row, reused = t.prefill(p2)  # too short for the side
    assert reused == len(p1) + 2 and main.decoded == MIN_NEW + 1 and int(np.argmax(row)) == _expected(p2)
    p3 = p1 + list(range(300, 300 + 3 * MIN_NEW))  # the target rolls back to p1; the side holds p1 already
    copies = side.copies_out
    row, reused = t.prefill(p3)
    assert reused == len(p1) and int(np.argmax(row)) == _expected(p3)
    assert main.copies_out == 0 and side.copies_out == copies + 1  # one copy, side to target
    assert side.decoded == len(p1) + 3 * MIN_NEW and main.cells == p3


def test_the_target_state_is_copied_to_the_side_when_the_side_lacks_the_prefix() -> None:
    main, side = StateCtx("main"), StateCtx("side")
    t = Target(main, SidePrefill(side, ALWAYS))
    p1 = [3] * 10
    t.prefill(p1)  # short: on the target
    p2 = p1 + list(range(1, 100))
    row, reused = t.prefill(p2)
    assert reused == 10 and main.copies_out == 1 and side.decoded == 99 and main.cells == p2
    assert int(np.argmax(row)) == _expected(p2)


def test_a_failed_copy_falls_back_to_the_target_and_loses_nothing() -> None:
    main, side = StateCtx("main"), StateCtx("side")
    t = Target(main, SidePrefill(side, ALWAYS))
    p1 = list(range(1, 100))
    t.prefill(p1)
    side.fail_copy = True  # the copy back into the target fails (and clears it)
    p2 = list(range(1, 300))
    row, reused = t.prefill(p2)
    assert reused == 0 and main.cells == p2 and t.kv == p2 and int(np.argmax(row)) == _expected(p2)


def test_the_copies_must_pay_for_themselves() -> None:
    r = SideRates(main_s=1 / 85, side_s=1 / 126, copy_s=15e-6)
    assert r.worth(200, 1000, copies=2)
    assert not r.worth(40, 10_000, copies=2)  # a short addition to a long context: the copies cost more
    assert not r.worth(MIN_NEW - 1, MIN_NEW, copies=1)
    assert not SideRates(1 / 85, 1 / 85, 15e-6).worth(1000, 1000, copies=1)


@pytest.mark.parametrize("sampled", [False, True])
def test_a_real_engine_decodes_the_same_with_the_side_prefill(tmp_path, sampled) -> None:
    from engine.config import EngineConfig
    from engine.local import LocalEngine
    from engine.types import GenerateRequest, SamplingParams, generate
    from tests.engine.tinymodel import write_tiny_model

    model = str(write_tiny_model(tmp_path / "tiny.gguf", vocab=300, byte_fallback=True))
    sampling = SamplingParams(temperature=0.8, seed=4) if sampled else SamplingParams(temperature=0.0)
    prompt = "".join(f"line {i} of the prompt\n" for i in range(10))  # the tiny model holds 512 tokens
    outs = {}
    for side in (False, True):
        eng = LocalEngine.load(EngineConfig(model_path=model, n_ctx=1024, threads=1, side_prefill=side))
        try:
            first = generate(eng, GenerateRequest(prompt, max_tokens=24, sampling=sampling))
            second = generate(eng, GenerateRequest(prompt + first.text + "and more, " * 8, max_tokens=24, sampling=sampling))
            assert first.error is None and second.error is None
            outs[side] = (first.text, second.text)
            assert (eng.target.side is not None) is side
            if side:
                assert eng.target.side.used == 2  # both prompts were computed there
        finally:
            eng.close()
    assert outs[True] == outs[False]
