"""``tau bench``: every workload run plain and in every speculative configuration, side by
side in one process, greedy and sampled, with llama-cpp-python's own prompt-lookup decoding
as a peer column (and llama.cpp's llama-server, engine.lab.benchpeer, with --peer-server).
Speedups are ratios against plain decoding of the same workload and mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from engine.lab.benchdata.workloads import SUITES, Workload
from engine.lab.benchresult import (
    RunResult,
    bracket,
    first_difference,
    merge,
    modelled_speedup,
    pool,
    speedups,
)
from engine.lab.benchsim import divergence_gap, simulated
from engine.policy import Acceptance
from engine.spec import SpecConfig
from engine.types import DoneEvent, GenerateRequest, GenStats, SamplingParams

GREEDY = SamplingParams(temperature=0.0)
SAMPLED = SamplingParams(temperature=0.6, top_p=0.95, seed=1234)
# llama-server's chain with its defaults (top-k 40, min-p 0.05, the temperature last), sent to it explicitly:
# both sides sample one distribution, so only the draws differ (pool several rounds' seeds)
SAMPLED_LLAMA = SamplingParams(temperature=0.6, top_k=40, top_p=0.95, min_p=0.05, temper_last=True, seed=1234)
MODES = {"greedy": GREEDY, "sampled": SAMPLED, "sampled-llama": SAMPLED_LLAMA}
PAIR_REPREFILL = 64  # prompt tokens each run of a pair prefills (run_paired)
WARM_STEPS = 3  # single-row steps past the prompt before a pair (run_paired)


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


def select_requests(workloads: Sequence[Workload], picks: Sequence[int]) -> tuple[Workload, ...]:
    """The multi-request workloads cut to these requests (0-based, in this order): an outlier of a
    long run rerun on its own, over more rounds, without the hour before it."""
    out = []
    for wl in workloads:
        if len(wl.turns) < 2:
            continue
        bad = [i for i in picks if not 0 <= i < len(wl.turns)]
        if bad:
            raise ValueError(f"{wl.name} has requests 0-{len(wl.turns) - 1}, not {bad[0]}")
        out.append(replace(wl, turns=tuple(wl.turns[i] for i in picks)))
    if not out:
        raise ValueError("no workload of the suite has several requests to choose from")
    return tuple(out)


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
        return run_peer(engine, wl, mode, params)
    _fresh(engine, wl, cfg)
    dones: list[DoneEvent] = []
    try:
        dones = [_turn(engine, wl, turn, cfg, params) for turn in wl.turns]
    finally:
        _tidy(engine, wl, cfg)
    return _result(engine, wl, mode, cfg, dones)


def run_paired(engine, wl: Workload, mode: str, chosen: list[BenchConfig], rnd: int = 0) -> list[RunResult]:
    """A multi-request workload with every request run in each configuration back to back (the
    order alternating from request to request), instead of one configuration's requests after
    the other's: on a machine whose speed drifts by 10-20% over minutes, each request's ratio
    then compares two runs a few seconds apart. The speculative configuration's state (what its
    policy learned, the overlay) carries from its requests to the next as in a separate run:
    plain drafts nothing and leaves it alone. Before a pair the prompt is prefilled and stepped
    past outside both runs (``_warm``); each run then prefills only its last PAIR_REPREFILL
    tokens, which its time to first token shows."""
    base, others = chosen[0], chosen[1:]
    if base.name != "plain" or len(others) != 1 or others[0].spec is None or others[0].ngram_key:
        raise ValueError("a paired run compares plain with one other tau configuration")
    params = round_params(mode, rnd)
    other = others[0]
    _fresh(engine, wl, other)
    dones: dict[str, list[DoneEvent]] = {c.name: [] for c in chosen}
    try:
        for i, turn in enumerate(wl.turns):
            prompt = engine.chat_prompt(list(turn))  # rendered once for the warm-up and both runs
            tokens = list(engine.tokenize(prompt))
            engine.call(lambda tokens=tokens: _warm(engine.target, tokens))
            for cfg in (chosen if i % 2 == 0 else chosen[::-1]):
                keep = max(0, len(tokens) - PAIR_REPREFILL)
                engine.call(lambda keep=keep: engine.target.rollback(min(keep, len(engine.target.kv))))
                dones[cfg.name].append(_turn(engine, wl, turn, cfg, params, prompt))
    finally:
        _tidy(engine, wl, other)
    return [_result(engine, wl, mode, c, dones[c.name]) for c in chosen]


def _warm(target, tokens: list[int]) -> None:
    """The request's prompt prefilled and a few single-row steps after it, outside any run: on a
    CUDA build llama.cpp re-captures its graph for single-row steps whenever the context grew
    since the last capture (a traced H200 run: the first run of a pair paid two 4 ms steps on
    2-token replies, the second none), so each run of the pair starts from the same state."""
    target.prefill(tokens)
    for _ in range(WARM_STEPS):
        target.eval([tokens[-1]], all_logits=False)


def _fresh(engine, wl: Workload, cfg: BenchConfig) -> None:
    """Speculation state from scratch (each run learns anew), the workload's files registered
    when the configuration uses them, and an empty KV cache."""
    engine.speculator.acceptance = Acceptance()
    engine.ngram.reset()
    for key in wl.repo:
        engine.ngram.remove_source("bench:" + key)
    if cfg.repo_context:
        for key, text in wl.repo.items():
            engine.register_context("bench:" + key, text)
    engine.call(lambda: engine.target.rollback(0))
    if cfg.ngram_key:
        from engine.drafters.ngram import NgramDrafter
        from engine.slot import DrafterSlot

        name = f"ngram-k{cfg.ngram_key}"
        engine.speculator.slots[name] = DrafterSlot(NgramDrafter(cfg.ngram_key, cfg.ngram_key, name=name))


def _tidy(engine, wl: Workload, cfg: BenchConfig) -> None:
    for key in wl.repo:
        engine.ngram.remove_source("bench:" + key)
    if cfg.ngram_key:
        engine.speculator.slots.pop(f"ngram-k{cfg.ngram_key}", None)


def _result(engine, wl: Workload, mode: str, cfg: BenchConfig, dones: list[DoneEvent]) -> RunResult:
    total, acc, ids = merge(dones)
    curve = engine.speculator.curve
    each = [d.stats for d in dones] if len(dones) > 1 else []  # per-request lists: multi-request runs only
    return RunResult(
        wl.name, mode, cfg.name, total.completion_tokens,
        decode_tok_s=total.decode_tok_s, wall_tok_s=total.wall_tok_s, tau=total.tau,
        accept_by_pos=[round(a, 3) for a in acc[:16]],
        drafted=total.drafted, accepted=total.accepted, near_ties=total.near_tie_divergences, token_ids=ids,
        decode_s=total.decode_s, wall_s=total.wall_s, turn_lens=[len(d.token_ids) for d in dones],
        first_token_s=dones[0].stats.first_token_s if dones else 0.0,
        passes=total.verify_passes, emitted=total.emitted, turn_tok_s=[d.stats.decode_tok_s for d in dones],
        modelled=modelled_speedup([d.stats for d in dones], curve),
        turn_modelled=[modelled_speedup([d.stats], curve) for d in dones],
        turn_drafted=[sum(d.stats.drafted.values()) for d in dones],
        draft_share=round(total.draft_s / total.decode_s, 4) if total.decode_s > 0 else None,
        request_decode_s=[round(s.decode_s, 4) for s in each],
        request_draft_s=[round(s.draft_s, 4) for s in each],
        request_step_ms=[_step_ms(s) for s in each],
    )


def _step_ms(stats: GenStats) -> float:
    steps = stats.pass_rows.get(1, 0)
    return round(1000 * stats.step_s / steps, 2) if steps else 0.0


def _turn(engine, wl: Workload, turn: tuple[dict, ...], cfg: BenchConfig, params: SamplingParams,
          prompt: str | None = None) -> DoneEvent:
    assert cfg.spec is not None  # the peer runs through run_peer
    spec = replace(cfg.spec, max_window=cfg.window or engine.max_window)
    prompt = prompt if prompt is not None else engine.chat_prompt(list(turn))
    req = GenerateRequest(prompt, max_tokens=wl.max_tokens, sampling=params)
    done: DoneEvent | None = None
    for ev in engine.stream(req, spec=spec):
        if isinstance(ev, DoneEvent):
            done = ev
    if done is None or done.error:
        raise RuntimeError(f"{wl.name}/{cfg.name}: {done.error if done else 'no result'}")
    return done


def run_peer(engine, wl: Workload, mode: str, params: SamplingParams) -> RunResult:
    """llama-cpp-python's prompt-lookup decoding on the workload, with the mode's sampling settings (its
    sampler runs llama.cpp's chain, the temperature last, whatever the mode's order)."""
    from engine.peer_backend import peer_prompt_lookup

    tokens = 0
    decode_s = wall_s = 0.0
    for turn in wl.turns:
        prompt = engine.chat_prompt(list(turn))
        n, dec, wall = engine.call(
            lambda prompt=prompt: peer_prompt_lookup(engine.peer_settings, prompt, wl.max_tokens, params.temperature,
                                                     params.top_p, top_k=params.top_k, min_p=params.min_p,
                                                     seed=1234 if params.seed is None else params.seed)
        )
        tokens += n
        decode_s += dec
        wall_s += wall
    return RunResult(wl.name, mode, "peer-lookup", tokens, tokens / decode_s if decode_s else 0.0,
                     tokens / wall_s if wall_s else 0.0, 0.0, [], {}, {}, decode_s=decode_s, wall_s=wall_s)


def run_bench(
    engine,
    suite: str = "full",
    modes: tuple[str, ...] = ("greedy", "sampled"),
    configs: tuple[str, ...] | None = None,
    progress: Callable[[str, float], None] | None = None,
    bracketed: bool = True,
    rounds: int = 1,
    paired: bool = False,
    workloads: Sequence[Workload] | None = None,
) -> list[RunResult]:
    """workloads: these of the suite's only (default: all of them).

    bracketed: run plain again after the other configurations and pool both (see ``bracket``).

    paired: run each request of a workload in plain and the one other configuration back to
    back (``run_paired``), instead of bracketing whole runs.

    rounds: run each group this many times. Each round's speedups are against that round's
    own bracketing plain runs, the configurations' order rotates from round to round (so
    none always runs just after plain, on a machine that is warming up or slowing down),
    and the reported result pools the rounds, with every round's speedup alongside.
    """
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r} (one of {', '.join(SUITES)})")
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds}")
    if paired and (configs is None or len(set(configs) - {"plain"}) != 1):
        raise ValueError("a paired run takes plain and one other configuration")
    chosen = [c for c in CONFIGS if (c.default if configs is None else c.name in configs)]
    has_draft = "draft" in engine.speculator.slots
    chosen = [c for c in chosen if has_draft or not c.needs_draft]
    if not chosen or chosen[0].name != "plain":
        chosen = [CONFIGS[0]] + [c for c in chosen if c.name != "plain"]
    workloads = SUITES[suite] if workloads is None else workloads
    per_round = len(chosen) + (1 if bracketed and not paired and len(chosen) > 1 else 0)
    total = len(workloads) * len(modes) * per_round * rounds
    done = 0
    results: list[RunResult] = []
    for wl in workloads:
        for mode in modes:
            by_round: list[list[RunResult]] = []
            for rnd in range(rounds):
                if paired:
                    if progress:
                        progress(f"{wl.name} {mode} paired round {rnd + 1}/{rounds}", done / total)
                    group = run_paired(engine, wl, mode, chosen, rnd)
                    done += len(chosen)
                    _compare(engine, wl, mode, chosen, group)
                    by_round.append(group)
                    continue
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
                speedups(pooled)
            ngram = next(c for c in CONFIGS if c.name == "ngram")
            assert ngram.spec is not None
            pooled[0].simulated = simulated(engine, wl, mode, pooled[0], ngram.spec)
            results.extend(pooled)
    if progress:
        progress("done", 1.0)
    if any(c.spec is None for c in chosen):
        from engine.peer_backend import close_peers

        close_peers()  # the peer's own copy of the model
    return results


def _compare(engine, wl: Workload, mode: str, chosen: list[BenchConfig], group: list[RunResult]) -> None:
    """Speedups against the group's plain run (group[0]); greedy runs compared token by token."""
    speedups(group)
    base = group[0]
    for r, cfg in zip(group, chosen, strict=True):
        if mode == "greedy" and cfg.spec is not None and cfg.name != "plain":
            r.first_divergence = first_difference(r.token_ids, base.token_ids)
            r.same_as_plain = r.first_divergence is None
            if r.first_divergence is not None:
                r.divergence_gap = divergence_gap(engine, wl, base, r.first_divergence)
