"""The draft model's cost per drafted token counts the per-pass decode that takes in what the
target accepted (its logits give the first drafted token), but not a catch-up after sitting out."""

from __future__ import annotations

import numpy as np

from engine.drafters import draft_model
from engine.drafters.draft_model import IN_STEP_SYNC, DraftModelDrafter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


class FakeCtx:
    """Each decode call costs one second on the fake clock, whatever its length."""

    n_ctx = 4096

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.calls: list[int] = []

    def decode(self, tokens, pos, *, all_logits):
        self.clock.now += 1.0
        self.calls.append(len(tokens))
        logits = np.zeros((1, 50), dtype=np.float32)
        logits[0, 7] = 5.0
        return logits

    def truncate(self, pos):
        pass


def test_cost_counts_the_in_step_sync_not_a_catch_up(monkeypatch) -> None:
    clock = Clock()
    monkeypatch.setattr(draft_model, "time", clock)
    ctx = FakeCtx(clock)
    d = DraftModelDrafter(ctx)
    history = list(range(10, 10 + IN_STEP_SYNC + 20))
    d.propose(history, 3)  # catch-up of the whole history (not counted) + 2 drafting decodes
    assert ctx.calls[0] == len(history) and d.tokens == 3
    assert d.seconds == 2.0
    history += [7, 7, 7, 3]  # the target accepted three drafts and corrected the fourth token
    d.propose(history, 3)  # one in-step sync (counted: it yields the first draft) + 2 decodes
    assert ctx.calls[3] <= IN_STEP_SYNC
    assert d.tokens == 6 and d.seconds == 5.0
    assert d.cost_per_token == 5.0 / 6
