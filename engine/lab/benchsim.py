"""What tau bench works out from plain's output: the policy replayed in virtual time, and near-ties."""

from __future__ import annotations

from dataclasses import replace

from engine.lab.benchdata.workloads import Workload
from engine.lab.benchresult import RunResult
from engine.spec import SpecConfig


def turn_prompt(engine, turn: tuple[dict, ...]) -> list[int]:
    """A turn's prompt tokens, as its run fed them to the engine."""
    return list(engine.tokenize(engine.chat_prompt(list(turn))))


def simulated(engine, wl: Workload, mode: str, base: RunResult, ngram: SpecConfig) -> dict[str, float] | None:
    """The n-gram policy and its ceiling replayed in virtual time on plain's output (first
    round) under the engine's verify-cost curve (engine.lab.simulate): the speedup without the
    machine's noise, and the most any window policy could get from the overlay: the ``ngram``
    configuration (no repository files). One overlay serves every turn, as in a run."""
    from engine.drafters.ngram import NgramDrafter
    from engine.lab.simulate import ceiling, simulate

    if not base.token_ids:
        return None
    curve = dict(engine.speculator.curve.points)
    spec = replace(ngram, max_window=engine.max_window)
    keys = engine.ngram.key_lens
    policy_overlay, ceiling_overlay = NgramDrafter(keys[0], keys[-1]), NgramDrafter(keys[0], keys[-1])
    plain_s = spec_s = best_s = 0.0
    start = 0
    for turn, n in zip(wl.turns, base.turn_lens, strict=False):
        prompt = turn_prompt(engine, turn)
        out = base.token_ids[start : start + n]
        start += n
        if not out:
            continue
        r = simulate(prompt, out, curve, spec=spec, drafter=lambda: policy_overlay, mode=mode)
        plain_s += r.plain_s
        spec_s += r.spec_s
        best_s += ceiling(prompt, out, curve, drafter=lambda: ceiling_overlay, max_len=engine.max_window)[1]
    if not spec_s or not best_s:
        return None
    return {"ngram": round(plain_s / spec_s, 3), "ceiling": round(plain_s / best_s, 3)}


def divergence_gap(engine, wl: Workload, base: RunResult, i: int) -> float | None:
    """The target's top-2 logit gap at token ``i`` of plain's output (where another run left it),
    computed by one plain prefill of that turn's prompt and plain's tokens before ``i``."""
    start = 0
    for turn, n in zip(wl.turns, base.turn_lens, strict=False):
        if i <= start + n:
            return float(engine.next_token_gap(turn_prompt(engine, turn) + base.token_ids[start:i]))
        start += n
    return None
