"""What a plain pass costs the speculation machinery, counted (not timed): on a GPU a step takes
about 2 ms, so work that grows with the history, or a shelved drafter doing anything, shows."""

from __future__ import annotations

import numpy as np

from engine import speculator as speculator_module
from engine.drafters.draft_model import DraftModelDrafter
from engine.drafters.ngram import NgramDrafter
from engine.policy import Acceptance, CostCurve
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import PROBE_EVERY, Speculator


class CountingList(list):
    """A history that counts the elements read from it (indexing, slicing, iterating)."""

    reads = 0

    def __getitem__(self, i):  # type: ignore[override]
        got = super().__getitem__(i)
        CountingList.reads += len(got) if isinstance(i, slice) else 1
        return got

    def __iter__(self):  # type: ignore[override]
        CountingList.reads += len(self)
        return super().__iter__()


class CountingCtx:
    """A draft context that only counts: a shelved drafter must not touch it."""

    n_ctx = 1 << 20

    def __init__(self) -> None:
        self.decodes = 0

    def decode(self, tokens, pos, *, all_logits):
        self.decodes += 1
        return np.zeros((max(1, len(tokens)), 8), dtype=np.float32)

    def truncate(self, n: int) -> None:
        pass


def _index_entries(d: NgramDrafter) -> list[tuple[int, int]]:
    return [e for lst in d._index.values() for e in lst]


def test_the_ngram_index_takes_each_token_once_per_key_length() -> None:
    d = NgramDrafter()
    hist: list[int] = []
    sizes = []
    for t in range(300):  # distinct tokens: no candidate list reaches its cap
        hist.append(t)
        d.propose(hist, 8)
        sizes.append(len(_index_entries(d)))
    steps = {b - a for a, b in zip(sizes[10:], sizes[11:], strict=False)}
    assert steps == {len(d.key_lens)}  # O(1) a token: one entry per key length
    assert all(len(lst) == len(set(lst)) for lst in d._index.values())  # a key's place once (no double vote)


def _plain_passes(history_len: int, passes: int) -> tuple[float, int, int, int]:
    """(history elements read per pass, draft ctx decodes, draft proposals, optimistic checks) over
    plain passes of new text, with the n-gram overlay proposing and a draft model that never pays."""
    rng = np.random.default_rng(1)
    ctx = CountingCtx()
    drafter = DraftModelDrafter(ctx)
    proposals = 0
    real_propose = drafter.propose

    def propose(history, max_len):
        nonlocal proposals
        proposals += 1
        return real_propose(history, max_len)

    drafter.propose = propose  # type: ignore[method-assign]
    # a drafted token costs 3 single steps: it would not pay even if it always predicted well
    curve = CostCurve({1: 0.002, 2: 0.0075, 8: 0.008, 41: 0.0095})
    slots = {"ngram": DrafterSlot(NgramDrafter(), lookup=True),
             "draft": DrafterSlot(drafter, lookup=False, initial_cost=0.006)}
    sp = Speculator(curve, slots, Acceptance(prior=0.05))
    checks = 0
    real_can_pay = speculator_module.can_pay

    def can_pay(*a, **kw):
        nonlocal checks
        checks += 1
        return real_can_pay(*a, **kw)

    speculator_module.can_pay = can_pay  # type: ignore[assignment]
    try:
        hist = CountingList(int(x) for x in rng.integers(3, 40, history_len))
        spec = SpecConfig(drafters=("ngram", "draft"))
        sp.pick(hist, spec, "greedy", 1000)  # the first pass indexes the prompt
        CountingList.reads = 0
        for t in rng.integers(3, 40, passes):
            sp.pick(hist, spec, "greedy", 1000)
            hist.append(int(t))
    finally:
        speculator_module.can_pay = real_can_pay
    return CountingList.reads / passes, ctx.decodes, proposals, checks


def test_a_plain_pass_reads_a_bounded_part_of_the_history_and_leaves_a_shelved_drafter_alone() -> None:
    passes = PROBE_EVERY * 4
    short, decodes, proposals, checks = _plain_passes(500, passes)
    long, *_ = _plain_passes(4000, passes)
    # the n-gram overlay's keys and matches and the draft model's lag: a few dozen tokens, not the history
    assert long < 200 and long < short + 20
    assert decodes == 0 and proposals == 0  # no catch-up and no drafting while it sits out
    assert checks <= passes // PROBE_EVERY  # "would it ever pay" is asked when a probe is due only
