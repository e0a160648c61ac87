"""``tau bench``: every workload run plain and in every speculative configuration, side by
side in one process, greedy and sampled, with llama-cpp-python's own prompt-lookup decoding
as a peer column. Speedups are ratios against plain decoding of the same workload and mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.lab.benchdata.workloads import SUITES, Workload
from engine.policy import Acceptance
from engine.spec import SpecConfig
from engine.types import DoneEvent, GenerateRequest, SamplingParams
from engine.verify import NEAR_TIE_LOGIT_GAP

GREEDY = SamplingParams(temperature=0.0)
SAMPLED = SamplingParams(temperature=0.6, top_p=0.95, seed=1234)
MODES = {"greedy": GREEDY, "sampled": SAMPLED}


@dataclass(frozen=True)
class BenchConfig:
    name: str
    spec: SpecConfig | None  # None: the peer (llama-cpp-python's LlamaPromptLookupDecoding)
    repo_context: bool = False  # register the workload's repository files with the overlay
    needs_draft: bool = False
    ngram_key: int = 0  # >0: a separate overlay with this single key length (key-length sweep)
    default: bool = True  # part of the default set (others run when named with --configs)
    window: int = 0  # >0: this window limit; 0: the engine's (config, tuned or default)


CONFIGS: tuple[BenchConfig, ...] = (
    BenchConfig("plain", SpecConfig(drafters=())),
    BenchConfig("ngram", SpecConfig(drafters=("ngram",))),
    BenchConfig("ngram+repo", SpecConfig(drafters=("ngram",)), repo_context=True),
    BenchConfig("ngram-fixed8", SpecConfig(drafters=("ngram",), adaptive=False, fixed_window=8)),
    BenchConfig("draft", SpecConfig(drafters=("draft",)), needs_draft=True),
    BenchConfig("draft-fixed4", SpecConfig(drafters=("draft",), adaptive=False, fixed_window=4), needs_draft=True),
    BenchConfig("auto", SpecConfig(), repo_context=True),
    BenchConfig("peer-lookup", None),
) + tuple(
    BenchConfig(f"ngram-k{k}", SpecConfig(drafters=(f"ngram-k{k}",)), ngram_key=k, default=False) for k in (2, 3, 4, 6, 8, 12)
) + tuple(
    BenchConfig(f"ngram-w{w}", SpecConfig(drafters=("ngram",)), window=w, default=False) for w in (8, 16, 24, 32, 48, 64)
)


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

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("token_ids", "turn_lens", "decode_s", "wall_s", "timed_tokens")}


def sum_counts(counts: list[dict[str, int]]) -> dict[str, int]:
    """Per-drafter counts (drafted, accepted) added up."""
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return out


def mean_by_position(rates: list[Sequence[float]]) -> list[float]:
    """Acceptance by draft position over several runs: each position's rate averaged over
    the runs that reached it."""
    width = max((len(r) for r in rates), default=0)
    out = []
    for i in range(width):
        vals = [r[i] for r in rates if len(r) > i]
        out.append(sum(vals) / len(vals))
    return out


def _merge(dones: list[DoneEvent]) -> tuple[int, float, float, int, dict, dict, list[float], int, list[int]]:
    tokens = sum(d.stats.completion_tokens for d in dones)
    decode_s = sum(d.stats.decode_s for d in dones)
    wall_s = sum(d.stats.wall_s for d in dones)
    passes = sum(d.stats.verify_passes for d in dones)
    drafted = sum_counts([d.stats.drafted for d in dones])
    accepted = sum_counts([d.stats.accepted for d in dones])
    acc = mean_by_position([d.stats.accept_by_pos for d in dones])
    near = sum(d.stats.near_tie_divergences for d in dones)
    ids = [t for d in dones for t in d.token_ids]
    return tokens, decode_s, wall_s, passes, drafted, accepted, acc, near, ids


def first_difference(a: list[int], b: list[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def round_params(mode: str, rnd: int) -> SamplingParams:
    """Round ``rnd``'s sampling settings: sampled rounds draw other sequences (seed + round), so
    several rounds average over what is sampled as well as over the machine's speed."""
    params = MODES[mode]
    if rnd and params.seed is not None:
        params = replace(params, seed=params.seed + rnd)
    return params


def run_config(engine, wl: Workload, mode: str, cfg: BenchConfig, rnd: int = 0) -> RunResult:
    """One workload in one configuration; multi-turn workloads reuse the KV prefix between turns."""
    params = round_params(mode, rnd)
    if cfg.spec is None:
        return run_peer(engine, wl, params)
    engine.speculator.acceptance = Acceptance()  # each run learns from scratch
    engine.ngram.reset()
    for key in wl.repo:
        engine.ngram.remove_source("bench:" + key)
    if cfg.repo_context:
        for key, text in wl.repo.items():
            engine.register_context("bench:" + key, text)
    engine.call(lambda: engine.target.rollback(0))
    if cfg.ngram_key:
        from engine.drafters.ngram import NgramDrafter
        from engine.speculator import DrafterSlot

        name = f"ngram-k{cfg.ngram_key}"
        engine.speculator.slots[name] = DrafterSlot(NgramDrafter(cfg.ngram_key, cfg.ngram_key, name=name))
    dones: list[DoneEvent] = []
    try:
        dones = _turns(engine, wl, cfg, params)
    finally:
        for key in wl.repo:
            engine.ngram.remove_source("bench:" + key)
        if cfg.ngram_key:
            engine.speculator.slots.pop(f"ngram-k{cfg.ngram_key}", None)
    tokens, decode_s, wall_s, passes, drafted, accepted, acc, near, ids = _merge(dones)
    return RunResult(
        wl.name, mode, cfg.name, tokens,
        decode_tok_s=tokens / decode_s if decode_s else 0.0,
        wall_tok_s=tokens / wall_s if wall_s else 0.0,
        tau=tokens / passes if passes else 0.0,
        accept_by_pos=[round(a, 3) for a in acc[:16]],
        drafted=drafted, accepted=accepted, near_ties=near, token_ids=ids, decode_s=decode_s, wall_s=wall_s,
        turn_lens=[len(d.token_ids) for d in dones],
    )


def _turns(engine, wl: Workload, cfg: BenchConfig, params: SamplingParams) -> list[DoneEvent]:
    assert cfg.spec is not None  # the peer runs through run_peer
    spec = replace(cfg.spec, max_window=cfg.window or engine.max_window)
    dones: list[DoneEvent] = []
    for turn in wl.turns:
        prompt = engine.chat_prompt(list(turn))
        req = GenerateRequest(prompt, max_tokens=wl.max_tokens, sampling=params)
        done: DoneEvent | None = None
        for ev in engine.stream(req, spec=spec):
            if isinstance(ev, DoneEvent):
                done = ev
        if done is None or done.error:
            raise RuntimeError(f"{wl.name}/{cfg.name}: {done.error if done else 'no result'}")
        dones.append(done)
    return dones


def run_peer(engine, wl: Workload, params: SamplingParams) -> RunResult:
    from engine.backend import peer_prompt_lookup

    mode = "greedy" if params.greedy else "sampled"
    tokens = 0
    decode_s = wall_s = 0.0
    for turn in wl.turns:
        prompt = engine.chat_prompt(list(turn))
        n, dec, wall = engine.call(
            lambda prompt=prompt: peer_prompt_lookup(engine, prompt, wl.max_tokens, params.temperature, params.top_p)
        )
        tokens += n
        decode_s += dec
        wall_s += wall
    return RunResult(wl.name, mode, "peer-lookup", tokens, tokens / decode_s if decode_s else 0.0,
                     tokens / wall_s if wall_s else 0.0, 0.0, [], {}, {}, decode_s=decode_s, wall_s=wall_s)


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
                    timed_tokens=tokens)
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
    passes = sum(r.tokens / r.tau for r in runs if r.tau)
    drifts = [r.drift for r in runs if r.drift is not None]
    differ = [r for r in runs if r.same_as_plain is False]
    ref = differ[0] if differ else first
    return replace(
        first, tokens=tokens, timed_tokens=timed,
        accept_by_pos=[round(a, 3) for a in mean_by_position([r.accept_by_pos for r in runs])],
        decode_tok_s=timed / dec if dec else 0.0, wall_tok_s=timed / wall if wall else 0.0,
        tau=tokens / passes if passes else first.tau,
        drafted=sum_counts([r.drafted for r in runs]), accepted=sum_counts([r.accepted for r in runs]),
        near_ties=sum(r.near_ties for r in runs), decode_s=dec, wall_s=wall,
        drift=max(drifts, key=lambda d: abs(d - 1)) if drifts else None,  # the largest move of any round
        round_speedups=[r.speedup for r in runs],
        same_as_plain=None if first.same_as_plain is None else not differ,
        first_divergence=ref.first_divergence, divergence_gap=ref.divergence_gap,
    )


def turn_prompt(engine, turn: tuple[dict, ...]) -> list[int]:
    """A turn's prompt tokens, as its run fed them to the engine."""
    return list(engine.tokenize(engine.chat_prompt(list(turn))))


def simulated(engine, wl: Workload, mode: str, base: RunResult) -> dict[str, float] | None:
    """The n-gram policy and its ceiling replayed in virtual time on plain's output (first
    round) under the engine's verify-cost curve (engine.lab.simulate): the speedup without the
    machine's noise, and the most any window policy could get from the overlay: the ``ngram``
    configuration (no repository files). One overlay serves every turn, as in a run."""
    from engine.drafters.ngram import NgramDrafter
    from engine.lab.simulate import ceiling, simulate

    if not base.token_ids:
        return None
    curve = dict(engine.speculator.curve.points)
    ngram = next(c for c in CONFIGS if c.name == "ngram")
    assert ngram.spec is not None
    spec = replace(ngram.spec, max_window=engine.max_window)
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


def run_bench(
    engine,
    suite: str = "full",
    modes: tuple[str, ...] = ("greedy", "sampled"),
    configs: tuple[str, ...] | None = None,
    progress: Callable[[str, float], None] | None = None,
    bracketed: bool = True,
    rounds: int = 1,
) -> list[RunResult]:
    """bracketed: run plain again after the other configurations and pool both (see ``bracket``).

    rounds: run each group this many times. Each round's speedups are against that round's
    own bracketing plain runs, the configurations' order rotates from round to round (so
    none always runs just after plain, on a machine that is warming up or slowing down),
    and the reported result pools the rounds, with every round's speedup alongside.
    """
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r} (one of {', '.join(SUITES)})")
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds}")
    chosen = [c for c in CONFIGS if (c.default if configs is None else c.name in configs)]
    has_draft = "draft" in engine.speculator.slots
    chosen = [c for c in chosen if has_draft or not c.needs_draft]
    if not chosen or chosen[0].name != "plain":
        chosen = [CONFIGS[0]] + [c for c in chosen if c.name != "plain"]
    workloads = SUITES[suite]
    per_round = len(chosen) + (1 if bracketed and len(chosen) > 1 else 0)
    total = len(workloads) * len(modes) * per_round * rounds
    done = 0
    results: list[RunResult] = []
    for wl in workloads:
        for mode in modes:
            by_round: list[list[RunResult]] = []
            for rnd in range(rounds):
                others = chosen[1:]
                if others:
                    shift = rnd % len(others)
                    others = others[shift:] + others[:shift]
                order = [chosen[0]] + others + ([chosen[0]] if per_round > len(chosen) else [])
                runs: dict[str, RunResult] = {}
                closing: RunResult | None = None
                for i, cfg in enumerate(order):
                    if progress:
                        tag = f" round {rnd + 1}/{rounds}" if rounds > 1 else ""
                        progress(f"{wl.name} {mode} {cfg.name}{tag}", done / total)
                    r = run_config(engine, wl, mode, cfg, rnd)
                    done += 1
                    if i and cfg is chosen[0]:
                        closing = r
                    else:
                        runs[cfg.name] = r
                if closing is not None:
                    runs[chosen[0].name] = bracket(runs[chosen[0].name], closing)
                group = [runs[c.name] for c in chosen]
                _compare(engine, wl, mode, chosen, group)
                by_round.append(group)
            pooled = [pool([g[j] for g in by_round]) for j in range(len(chosen))]
            if rounds > 1:  # the pooled ratio: every round's tokens over every round's seconds
                _speedups(pooled)
            pooled[0].simulated = simulated(engine, wl, mode, pooled[0])
            results.extend(pooled)
    if progress:
        progress("done", 1.0)
    return results


def _speedups(group: list[RunResult]) -> None:
    """Every result's tok/s over the plain result's (group[0])."""
    base = group[0]
    if not base.decode_tok_s:
        return
    for r in group:
        r.speedup = r.decode_tok_s / base.decode_tok_s
        r.wall_speedup = r.wall_tok_s / base.wall_tok_s if base.wall_tok_s else 0.0


def _compare(engine, wl: Workload, mode: str, chosen: list[BenchConfig], group: list[RunResult]) -> None:
    """Speedups against the group's plain run (group[0]); greedy runs compared token by token."""
    _speedups(group)
    base = group[0]
    for r, cfg in zip(group, chosen, strict=True):
        if mode == "greedy" and cfg.spec is not None and cfg.name != "plain":
            r.first_divergence = first_difference(r.token_ids, base.token_ids)
            r.same_as_plain = r.first_divergence is None
            if r.first_divergence is not None:
                r.divergence_gap = divergence_gap(engine, wl, base, r.first_divergence)


def results_json(engine, suite: str, rounds: int, results: list[RunResult]) -> dict[str, Any]:
    """What ``tau bench --out`` writes: the run's setting, the engine's curve and every result."""
    return {
        "suite": suite,
        "rounds": rounds,
        "model": engine.info.name,
        "backend": engine.info.backend,
        "verify_curve": {str(k): round(v, 4) for k, v in engine.speculator.curve.points.items()},
        "results": [r.to_dict() for r in results],
        "summary": summary(results),
    }


def format_table(results: list[RunResult]) -> str:
    head = f"{'workload':<15} {'mode':<8} {'config':<13} {'tok':>5} {'dec t/s':>8} {'wall t/s':>8} {'speedup':>8} {'tau':>5}  accept by position"
    lines = [head, "-" * len(head)]
    for r in results:
        acc = " ".join(f"{a:.2f}" for a in r.accept_by_pos[:8])
        same = "" if r.same_as_plain is None else ("  =plain" if r.same_as_plain else f"  differs@{r.first_divergence}")
        if r.divergence_gap is not None:
            same += f" (top-2 gap {r.divergence_gap:.2f})"
        if r.drift is not None:
            same = f"  (closing plain run {r.drift - 1:+.0%})"
        if r.simulated:
            same += f"  simulated: ngram {r.simulated['ngram']:.2f}x, ceiling {r.simulated['ceiling']:.2f}x"
        if r.drift is None and len(r.round_speedups) > 1:
            same += f"  rounds {min(r.round_speedups):.2f}-{max(r.round_speedups):.2f}x"
        lines.append(
            f"{r.workload:<15} {r.mode:<8} {r.config:<13} {r.tokens:>5} {r.decode_tok_s:>8.2f} {r.wall_tok_s:>8.2f} "
            f"{r.speedup:>7.2f}x {r.tau:>5.2f}  {acc}{same}"
        )
    return "\n".join(lines)


def summary(results: list[RunResult]) -> dict[str, Any]:
    """Best speculative speedup per workload kind and mode, and greedy equivalence counts."""
    out: dict[str, Any] = {}
    for r in results:
        if r.config in ("plain", "peer-lookup"):
            continue
        key = f"{r.workload}/{r.mode}"
        out.setdefault(key, {})[r.config] = round(r.speedup, 3)
    greedy = [r for r in results if r.same_as_plain is not None]
    out["greedy_runs_identical_to_plain"] = sum(1 for r in greedy if r.same_as_plain)
    out["greedy_runs_compared"] = len(greedy)
    out["near_tie_divergences"] = sum(r.near_ties for r in results)
    # greedy runs that differ from plain where plain's own choice was a near-tie (batched kernels' rounding)
    out["greedy_differences_at_near_ties"] = sum(
        1 for r in greedy if r.divergence_gap is not None and r.divergence_gap < NEAR_TIE_LOGIT_GAP)
    return out
