"""tau bench's llama-server column: llama.cpp's configurations on the bench's workloads, and
every result's ratio to llama-server plain beside its ratio to tau plain."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from engine.lab.bench import round_params, run_bench
from engine.lab.benchdata.workloads import SUITES, Workload
from engine.lab.benchresult import RunResult, first_difference, pool
from engine.lab.peer_server import PEER_PREFIX, LlamaServer, PeerConfig, run_configs


def ask_server(engine, srv: LlamaServer, pc: PeerConfig, wl: Workload, mode: str, rnd: int) -> RunResult:
    """One workload put to a running server, every turn, with round ``rnd``'s sampling settings."""
    params = round_params(mode, rnd)
    tokens = drafted = accepted = 0
    decode_s = wall_s = first = 0.0
    ids: list[int] = []
    lens: list[int] = []
    for i, turn in enumerate(wl.turns):
        r = srv.complete(engine.chat_prompt(list(turn)), wl.max_tokens, params.temperature, params.top_p, params.seed,
                         top_k=params.top_k, min_p=params.min_p)
        if i == 0:  # its prefill plus one decode step: the server's time to first token
            first = r.prompt_s + (r.decode_s / r.tokens if r.tokens else 0.0)
        tokens += r.tokens
        decode_s += r.decode_s
        wall_s += r.wall_s
        drafted += r.drafted
        accepted += r.accepted
        ids += r.token_ids
        lens.append(len(r.token_ids))
    return RunResult(wl.name, mode, pc.name, tokens, tokens / decode_s if decode_s else 0.0,
                     tokens / wall_s if wall_s else 0.0, 0.0, [], {pc.name: drafted} if drafted else {},
                     {pc.name: accepted} if drafted else {}, decode_s=decode_s, wall_s=wall_s, first_token_s=first,
                     token_ids=ids, turn_lens=lens)


def run_llama_server(engine, binary: Path, workloads: Sequence[Workload], modes: Sequence[str], rounds: int = 1,
                     progress: Callable[[str, float], None] | None = None, log_dir: Path | None = None,
                     plain_last: bool = False) -> list[RunResult]:
    """Every llama-server configuration on every workload and mode (rounds pooled), on the engine's
    model, context and threads. Each (workload, mode, round) gets fresh servers: ngram-mod keeps its
    n-gram table across requests, so a server that had answered the greedy request drafted the sampled
    one (and every later round) from that reply, a replay no single request gets (new code, rounds 3:
    738 tok/s against 446 in one round on an H100). A workload's turns still share one server."""
    ps = engine.peer_settings
    runs: dict[tuple[str, str, str], list[RunResult]] = {}
    total = len(workloads) * len(modes) * rounds * (4 if ps.draft_model_path else 3)
    done = 0

    def asker(wl: Workload, mode: str, rnd: int) -> Callable[[PeerConfig, LlamaServer], None]:
        def ask(pc: PeerConfig, srv: LlamaServer) -> None:
            nonlocal done
            if progress:
                progress(f"{wl.name} {mode} {pc.name}", done / total)
            runs.setdefault((wl.name, mode, pc.name), []).append(ask_server(engine, srv, pc, wl, mode, rnd))
            done += 1
        return ask

    for wl in workloads:
        for mode in modes:
            for rnd in range(rounds):
                run_configs(binary, ps.model_path, ps.draft_model_path, n_ctx=ps.n_ctx, threads=ps.threads,
                            gpu_layers=ps.gpu_layers, ask=asker(wl, mode, rnd), log_dir=log_dir, plain_last=plain_last)
    return [pool(rs) for rs in runs.values()]


def run_beside_llama_server(engine, binary: Path, suite: str, modes: Sequence[str], configs: tuple[str, ...] | None,
                            rounds: int = 1, paired: bool = False,
                            progress: Callable[[str, float], None] | None = None,
                            log_dir: Path | None = None) -> list[RunResult]:
    """tau's configurations and llama-server's on one workload and mode at a time, so both sides of
    each ratio run within minutes of each other (run as two half-hour blocks, a shared machine that
    sped up in the second half read every llama-server row faster than tau's), and in mirrored order
    from one mode to the next (tau first, then llama-server first): a machine drifting one way through
    a workload favours neither side over its two modes. Where llama-server goes first its plain runs
    last, so the two plain decodes stand side by side in both modes (tau's bracketing plain runs open
    and close its block), not three servers apart on every second mode."""
    results: list[RunResult] = []
    peers: list[RunResult] = []
    for wl in SUITES[suite]:
        for i, mode in enumerate(modes):
            for side in ("tau", "llama") if i % 2 == 0 else ("llama", "tau"):
                if side == "tau":
                    results += run_bench(engine, suite, (mode,), configs, progress=progress, rounds=rounds,
                                         paired=paired, workloads=(wl,))
                else:
                    peers += run_llama_server(engine, binary, (wl,), (mode,), rounds, progress=progress,
                                              log_dir=log_dir, plain_last=i % 2 == 1)
    return attach_peers(results, peers)


def attach_peers(results: list[RunResult], peers: list[RunResult]) -> list[RunResult]:
    """tau's results with llama-server's after each (workload, mode) group; every row's speedup is
    against tau plain and ``vs_peer_plain`` against llama-server plain. Greedy, each llama-server reply
    is set beside tau plain's (``same_as_plain``, ``first_divergence``): two builds of one model part
    at a near-tie (a 0.1-nat gap decided whether one reply re-emitted a file's interfaces), and from
    there the two sides time different text."""
    out: list[RunResult] = []
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for r in results + peers:
        groups.setdefault((r.workload, r.mode), []).append(r)
    for group in groups.values():
        plain = next((r for r in group if r.config == "plain"), None)
        peer_plain = next((r for r in group if r.config == PEER_PREFIX + "plain"), None)
        for r in group:
            if plain is not None and plain.decode_tok_s:
                r.speedup = r.decode_tok_s / plain.decode_tok_s
                r.wall_speedup = r.wall_tok_s / plain.wall_tok_s if plain.wall_tok_s else 0.0
            if peer_plain is not None and peer_plain.decode_tok_s:
                r.vs_peer_plain = r.decode_tok_s / peer_plain.decode_tok_s
            if (r.config.startswith(PEER_PREFIX) and r.mode == "greedy" and plain is not None and plain.token_ids
                    and r.token_ids):
                r.first_divergence = first_difference(r.token_ids, plain.token_ids)
                r.same_as_plain = r.first_divergence is None
        out.extend(group)
    return out
