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


def test_a_shelved_drafter_is_probed_only_when_catching_it_up_is_cheap() -> None:
    # a drafter that would pay at the optimistic rate, shelved (no evidence yet pays), far
    # behind the history: its probe is worth it at GPU prefill speed, not at CPU speed
    from engine.policy import Acceptance, CostCurve
    from engine.spec import SpecConfig
    from engine.speculator import PROBE_EVERY, DrafterSlot, Speculator

    class Drafter:
        name = "draft"
        cost_per_token = 0.02  # seconds a drafted token, a plain step being 0.1

        def __init__(self) -> None:
            self.kv: list[int] = list(range(100))  # it last synced 100 tokens in

        def propose(self, history, max_len):
            from engine.drafters.base import Draft

            return Draft(tuple(history[-max_len:]), self.name)

    def probes(prefill_s_per_token: float) -> int:
        curve = CostCurve({1: 0.1, 2: 0.11, 4: 0.12, 8: 0.14, 16: 0.2})
        spec = Speculator(curve, {"draft": DrafterSlot(Drafter(), lookup=False)}, Acceptance(prior=0.05))
        spec.prefill_s_per_token = prefill_s_per_token
        hist = list(range(1100))  # 1000 tokens of lag
        cfg = SpecConfig(drafters=("draft",))
        return sum(spec.pick(hist, cfg, "greedy", 64)[0] is not None for _ in range(PROBE_EVERY * 3))

    assert probes(0.0) == 3  # prefill speed not seen yet: probes as before
    assert probes(0.00005) == 3  # 1000 tokens x 0.05 ms x 0.2: 10 ms, a tenth of a step
    assert probes(0.012) == 0  # 1000 tokens x 12 ms x 0.2: 2.4 s, 24 steps
