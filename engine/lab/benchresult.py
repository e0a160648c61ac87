"""tau bench's results: one run's figures, and how runs are added up (rounds pooled, plain bracketed)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from statistics import geometric_mean
from typing import Any

from engine.policy import CostCurve
from engine.types import DoneEvent, GenStats, tau


@dataclass
class RunResult:
    workload: str
    mode: str
    config: str
    tokens: int
    decode_tok_s: float
    wall_tok_s: float
    tau: float
    accept_by_pos: list[float]
    drafted: dict[str, int]
    accepted: dict[str, int]
    speedup: float = 0.0
    wall_speedup: float = 0.0
    same_as_plain: bool | None = None
    first_divergence: int | None = None
    near_ties: int = 0
    divergence_gap: float | None = None  # greedy runs that differ: plain's top-2 logit gap where they part
    drift: float | None = None  # plain only: tok/s of the closing plain run over the opening one
    round_speedups: list[float] = field(default_factory=list)  # with several rounds: each round's speedup
    simulated: dict[str, float] | None = None  # plain only: engine.lab.simulate on plain's output (see ``simulated``)
    timed_tokens: int = field(default=0, repr=False)  # tokens behind decode_s/wall_s (0: tokens; a bracket: both runs')
    token_ids: list[int] = field(default_factory=list, repr=False)
    turn_lens: list[int] = field(default_factory=list, repr=False)  # how many of token_ids each turn made
    decode_s: float = field(default=0.0, repr=False)
    wall_s: float = field(default=0.0, repr=False)
    first_token_s: float = 0.0  # the first turn's request to first token (prefill, or a saved prefix loaded)
    vs_peer_plain: float | None = None  # with --peer-server: tok/s over llama-server plain's
    passes: int = field(default=0, repr=False)  # target passes and the tokens they emitted: tau's inputs
    emitted: int = field(default=0, repr=False)
    turn_tok_s: list[float] = field(default_factory=list, repr=False)  # each turn's (request's) decode tok/s
    worst_request: float | None = None  # multi-turn runs: the smallest of the requests' tok/s ratios to plain
    # ...of the requests of TIMED_REQUEST tokens or more: a 2-token reply takes 4 ms on a GPU, and
    # paired runs of one read 0.83-0.92x of plain with nothing drafted (modelled 1.00x)
    worst_timed_request: float | None = None
    request_ratios: list[float | None] = field(default_factory=list)  # multi-turn runs: each request's tok/s ratio to plain (None: no tokens to time)
    request_tokens: list[int] = field(default_factory=list)  # multi-turn runs: each request's tokens
    # the decode passes' speedup over plain under the engine's verify-cost curve (modelled_speedup):
    # what the policy's choices are worth without the machine's noise; per request for multi-turn runs
    modelled: float | None = None
    request_modelled: list[float] = field(default_factory=list)
    worst_modelled: float | None = None
    turn_modelled: list[float] = field(default_factory=list, repr=False)
    turn_drafted: list[int] = field(default_factory=list, repr=False)  # each turn's drafted tokens
    # multi-turn runs, requests of TIMED_REQUEST tokens or more: the worst of those that drafted
    # something, and the geometric mean over those that drafted nothing (the same passes as plain:
    # the loop's own cost, and the machine's noise, without the policy)
    worst_drafted_request: float | None = None
    undrafted_mean: float | None = None
    draft_share: float | None = None  # of decode time: the host work between passes (GenStats.draft_s)
    # multi-turn runs: each request's decode seconds and the host work among them, beside its plain
    # twin's: a request timed far below its modelled ratio (0.75x against 0.99x in a long run) shows
    # whether the time went to the passes or between them
    request_decode_s: list[float] = field(default_factory=list)
    request_draft_s: list[float] = field(default_factory=list)
    # and the mean milliseconds of its single-row passes: a request whose reply differs from its twin's
    # (sampled) times different text, but a step costs the same in both unless the loop adds to it
    request_step_ms: list[float] = field(default_factory=list)
    worst_timed_steps: tuple[float, float] | None = None  # the worst timed request's step ms, and its plain twin's

    def to_dict(self) -> dict[str, Any]:
        hidden = ("token_ids", "turn_lens", "decode_s", "wall_s", "timed_tokens", "passes", "emitted", "turn_tok_s",
                  "turn_modelled", "turn_drafted")
        return {k: v for k, v in self.__dict__.items() if k not in hidden}


def sum_counts(counts: list[dict[str, int]]) -> dict[str, int]:
    """Per-drafter counts (drafted, accepted) added up."""
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return out


def modelled_speedup(gens: Sequence[GenStats], curve: CostCurve) -> float:
    """Tokens the decode passes of ``gens`` emitted over what those passes cost under ``curve``
    in plain steps: 1.0 for plain decoding, and for speculation its speedup with every pass
    charged what the curve says its rows cost (each generation's first token comes from its prefill)."""
    cost = sum(count * curve.relative(rows) for g in gens for rows, count in g.pass_rows.items())
    return round(sum(g.emitted - 1 for g in gens) / cost, 3) if cost > 0 else 1.0


def mean_by_position(rates: list[Sequence[float]]) -> list[float]:
    """Acceptance by draft position over several runs: each position's rate averaged over
    the runs that reached it."""
    width = max((len(r) for r in rates), default=0)
    out = []
    for i in range(width):
        vals = [r[i] for r in rates if len(r) > i]
        out.append(sum(vals) / len(vals))
    return out


def merge(dones: list[DoneEvent]) -> tuple[GenStats, list[float], list[int]]:
    """A run's turns as one: their stats summed (GenStats +), acceptance by position averaged, token ids joined."""
    total = GenStats()
    for d in dones:
        total = total + d.stats
    acc = mean_by_position([d.stats.accept_by_pos for d in dones])
    return total, acc, [t for d in dones for t in d.token_ids]


def first_difference(a: list[int], b: list[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def bracket(first: RunResult, last: RunResult) -> RunResult:
    """The plain baseline from a plain run before and one after the other configurations.

    This machine's speed drifts (shared hosts, thermal limits) over the minutes a group of
    runs takes; pooling both plain runs makes every ratio compare against the same period,
    and ``drift`` shows how much the speed moved.
    """
    tokens = first.tokens + last.tokens
    dec = first.decode_s + last.decode_s
    wall = first.wall_s + last.wall_s
    out = RunResult(first.workload, first.mode, first.config, first.tokens,
                    decode_tok_s=tokens / dec if dec else 0.0, wall_tok_s=tokens / wall if wall else 0.0,
                    tau=first.tau, accept_by_pos=first.accept_by_pos, drafted={}, accepted={},
                    token_ids=first.token_ids, turn_lens=first.turn_lens, decode_s=dec, wall_s=wall,
                    timed_tokens=tokens, first_token_s=first.first_token_s, passes=first.passes, emitted=first.emitted,
                    turn_tok_s=[(a + b) / 2 for a, b in zip(first.turn_tok_s, last.turn_tok_s, strict=False)])
    out.drift = last.decode_tok_s / first.decode_tok_s if first.decode_tok_s else None
    return out


def pool(runs: list[RunResult]) -> RunResult:
    """One configuration's rounds as one result: tokens and seconds summed, so the pooled
    tok/s weighs every round by its length; stats that describe one run come from the first."""
    first = runs[0]
    if len(runs) == 1:
        return first
    tokens = sum(r.tokens for r in runs)
    timed = sum(r.timed_tokens or r.tokens for r in runs)  # a bracketed plain round timed two runs
    dec = sum(r.decode_s for r in runs)
    wall = sum(r.wall_s for r in runs)
    passes = sum(r.passes for r in runs)
    emitted = sum(r.emitted for r in runs)
    drifts = [r.drift for r in runs if r.drift is not None]
    differ = [r for r in runs if r.same_as_plain is False]
    ref = differ[0] if differ else first
    return replace(
        first, tokens=tokens, timed_tokens=timed,
        accept_by_pos=[round(a, 3) for a in mean_by_position([r.accept_by_pos for r in runs])],
        decode_tok_s=timed / dec if dec else 0.0, wall_tok_s=timed / wall if wall else 0.0,
        tau=tau(emitted, passes) if passes else first.tau, passes=passes, emitted=emitted,
        first_token_s=sum(r.first_token_s for r in runs) / len(runs),
        drafted=sum_counts([r.drafted for r in runs]), accepted=sum_counts([r.accepted for r in runs]),
        near_ties=sum(r.near_ties for r in runs), decode_s=dec, wall_s=wall,
        drift=max(drifts, key=lambda d: abs(d - 1)) if drifts else None,  # the largest move of any round
        round_speedups=[r.speedup for r in runs],
        same_as_plain=None if first.same_as_plain is None else not differ,
        first_divergence=ref.first_divergence, divergence_gap=ref.divergence_gap,
    )


TIMED_REQUEST = 32  # tokens: a shorter reply's time is mostly noise


def speedups(group: list[RunResult]) -> None:
    """Every result's tok/s over the plain result's (group[0])."""
    base = group[0]
    if not base.decode_tok_s:
        return
    for r in group:
        r.speedup = r.decode_tok_s / base.decode_tok_s
        r.wall_speedup = r.wall_tok_s / base.wall_tok_s if base.wall_tok_s else 0.0
        if r is not base and len(r.turn_tok_s) > 1 and len(r.turn_tok_s) == len(base.turn_tok_s):
            # a reply with no decoded tokens (an end of generation first) has no speed to compare
            ratios = [a / b if a > 0 and b > 0 else None for a, b in zip(r.turn_tok_s, base.turn_tok_s, strict=True)]
            r.request_ratios = [round(x, 3) if x is not None else None for x in ratios]
            r.request_tokens = list(r.turn_lens)
            r.worst_request = min(x for x in ratios if x is not None)
            if len(r.turn_lens) == len(ratios):
                timed = [(x, i) for i, (x, n) in enumerate(zip(ratios, r.turn_lens, strict=True))
                         if x is not None and n >= TIMED_REQUEST]
                r.worst_timed_request = None
                if timed:
                    r.worst_timed_request, i = min(timed)
                    if len(r.request_step_ms) == len(base.request_step_ms) == len(ratios):
                        r.worst_timed_steps = (r.request_step_ms[i], base.request_step_ms[i])
            if len(r.turn_modelled) == len(ratios):
                r.request_modelled = list(r.turn_modelled)
                r.worst_modelled = min(r.turn_modelled)
            if len(r.turn_drafted) == len(ratios) == len(r.turn_lens):
                timed_by = [(x, k > 0) for x, n, k in zip(ratios, r.turn_lens, r.turn_drafted, strict=True)
                            if x is not None and n >= TIMED_REQUEST]
                drafted = [x for x, k in timed_by if k]
                undrafted = [x for x, k in timed_by if not k]
                r.worst_drafted_request = min(drafted) if drafted else None
                r.undrafted_mean = geometric_mean(undrafted) if undrafted else None
