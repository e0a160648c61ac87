"""The draft model's cost per drafted token counts the per-pass decode that takes in what the
target accepted (its logits give the first drafted token); a catch-up after sitting out is
measured apart, per token taken in, and the policy charges it to the pass that needs it.
Both are recent averages: a long-running engine must not judge a drafter by its past."""

from __future__ import annotations

import numpy as np

from engine.drafters import draft_model
from engine.drafters.draft_model import IN_STEP_SYNC, DraftModelDrafter
from engine.drafters.model_drafter import COST_DECAY, RecentRate, common_prefix


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
    assert d.cost_per_token == (2.0 * COST_DECAY + 3.0) / (3 * COST_DECAY + 3)  # the older proposal weighs less
    assert d.catch_up_s_per_token == 1.0 / len(history[:-4])  # the first sync: 1 s for the whole history


def test_recent_cost_forgets_a_cheap_past() -> None:
    # a drafter that drafted cheaply early on (short context) and dearly now is judged by now
    r = RecentRate()
    for _ in range(200):
        r.add(0.01, 4)
    for _ in range(40):
        r.add(0.4, 4)
    assert r.value > 0.09  # the lifetime mean would be (200*0.01 + 40*0.4) / 960 = 0.019 s a token


def test_lag_counts_from_the_prefix_the_context_shares() -> None:
    # a server's next request from another conversation: the draft context holds 300 tokens of
    # the last one, sharing only a 3-token system prompt with this one
    d = DraftModelDrafter(FakeCtx(Clock()))
    d.kv = [1, 2, 3] + list(range(100, 400))
    other = [1, 2, 3] + list(range(1000, 1200))
    assert d.lag(other) == 200
    assert d.lag(d.kv + [5, 6]) == 2
    assert common_prefix([1, 2, 3, 4], [1, 2, 9, 4]) == 2 and common_prefix([], [1]) == 0


def test_a_shelved_drafter_is_probed_only_when_catching_it_up_is_cheap() -> None:
    # a drafter that would pay at the optimistic rate, shelved (no evidence yet pays), far
    # behind the history: its probe is worth it at GPU prefill speed, not at CPU speed
    from engine.policy import Acceptance, CostCurve
    from engine.slot import DrafterSlot
    from engine.spec import SpecConfig
    from engine.speculator import PROBE_EVERY, Speculator

    class Drafter:
        name = "draft"
        cost_per_token = 0.02  # seconds a drafted token, a plain step being 0.1

        def __init__(self) -> None:
            self.kv: list[int] = list(range(100))  # it last synced 100 tokens in

        def reset(self) -> None:
            self.kv.clear()

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

    assert probes(0.0) == 3  # prefill speed not seen yet: a probe costs its window, half a step
    # 1000 tokens x 0.05 ms x 0.2: 10 ms more a probe: a little less often (1% of the time at most)
    assert 1 <= probes(0.00005) <= 3
    assert probes(0.012) == 0  # 1000 tokens x 12 ms x 0.2: 2.4 s, 24 steps


class LaggingDrafter:
    """A costly drafter that always drafts the right tokens, ``behind`` tokens behind the history."""

    name = "draft"

    def __init__(self, behind: int, cost: float = 0.005, catch: float = 0.001) -> None:
        self.behind = behind
        self.cost_per_token = cost
        self.catch_up_s_per_token = catch
        self.caught: list[int] = []

    def lag(self, history) -> int:
        return self.behind

    def reset(self) -> None:
        self.behind = 0

    def catch_up(self, history) -> None:
        self.caught.append(len(history))
        self.behind = 0

    def propose(self, history, max_len):
        from engine.drafters.base import Draft

        return Draft(tuple(history[-max_len:]), self.name)


def _speculator(drafter, prior: float = 0.95):
    from engine.policy import Acceptance, CostCurve
    from engine.slot import DrafterSlot
    from engine.speculator import Speculator

    curve = CostCurve({1: 0.01, 2: 0.011, 4: 0.012, 8: 0.014, 16: 0.02})  # a GPU-like curve, 10 ms a step
    return Speculator(curve, {"draft": DrafterSlot(drafter, lookup=False)}, Acceptance(prior=prior))


def test_a_drafter_far_behind_pays_its_catch_up_in_the_pass_that_needs_it() -> None:
    from engine.spec import SpecConfig

    cfg = SpecConfig(drafters=("draft",))
    hist = list(range(3000))
    assert _speculator(LaggingDrafter(0)).pick(hist, cfg, "sampled", 16)[0] is not None
    # 2000 tokens behind at 1 ms each: 2 s, 200 steps; no window's gain pays that back
    assert _speculator(LaggingDrafter(2000)).pick(hist, cfg, "sampled", 16)[0] is None


def test_a_shelved_drafter_is_asked_again_only_every_few_passes_and_at_once_on_a_new_request() -> None:
    from engine.spec import SpecConfig
    from engine.speculator import RECHECK_EVERY

    class Counting(LaggingDrafter):
        asked = 0

        def lag(self, history) -> int:
            self.asked += 1
            return self.behind

    cfg = SpecConfig(drafters=("draft",))
    drafter = Counting(2000)  # shelved: catching up would not pay
    spec = _speculator(drafter)
    hist = list(range(3000))
    assert all(spec.pick(hist, cfg, "sampled", 16)[0] is None for _ in range(4 * RECHECK_EVERY))
    assert drafter.asked == 4  # the policy's host work, once in RECHECK_EVERY passes, not every pass
    drafter.behind = 0  # it caught up (a new request): asked at once, and now it pays
    spec.begin(hist, cfg, "sampled", 64)
    assert spec.pick(hist, cfg, "sampled", 16)[0] is not None


def test_the_guard_shelves_a_drafter_whose_passes_were_slower_than_plain() -> None:
    from engine.spec import SpecConfig

    cfg = SpecConfig(drafters=("draft",))
    spec = _speculator(LaggingDrafter(0))
    hist = list(range(100))
    assert spec.pick(hist, cfg, "sampled", 16)[0] is not None  # the estimate says it pays
    for _ in range(10):  # ... but its passes took 3 plain steps a token
        spec.record("draft", "sampled", 3 * 0.01 * 4, 4)
    assert spec.slots["draft"].guard("sampled").losing and not spec.slots["draft"].guard("greedy").losing
    picks = [spec.pick(hist, cfg, "sampled", 16)[0] for _ in range(60)]
    assert all(p is None for p in picks)  # shelved (probes come only every PROBE_EVERY passes)
    assert spec.pick(hist, cfg, "greedy", 16)[0] is not None
    for _ in range(60):  # passes that beat plain (probes, in a run) lift it again
        spec.record("draft", "sampled", 0.5 * 0.01 * 4, 4)
    assert spec.pick(hist, cfg, "sampled", 16)[0] is not None


def test_a_new_request_discounts_old_acceptance_and_catches_up_only_a_useful_drafter() -> None:
    from engine.spec import SpecConfig

    cfg = SpecConfig(drafters=("draft",))
    d = LaggingDrafter(500)
    spec = _speculator(d, prior=0.1)
    spec.end(300)  # replies run to 300 tokens: 500 tokens of catch-up (0.5 s) is worth it at 10 ms a step
    for _ in range(50):
        spec.acceptance.update("draft:sampled", 0, 8, 8)
    before = spec.acceptance._c[("draft:sampled", 0)].reached[0]
    spec.begin(list(range(600)), cfg, "sampled", 1000)
    assert spec.acceptance._c[("draft:sampled", 0)].reached[0] == before * 0.5
    assert d.caught == [600] and d.behind == 0  # still worth it at half the evidence: caught up with the prompt
    d.behind = 500
    for _ in range(10):
        spec.record("draft", "sampled", 3 * 0.01 * 4, 4)
    spec.begin(list(range(600)), cfg, "sampled", 1000)
    assert d.caught == [600]  # the guard has shelved it: no catch-up at the prefill
