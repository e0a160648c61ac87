"""tau bench's tables and JSON."""

from __future__ import annotations

from typing import Any

from engine.lab.benchresult import TIMED_REQUEST, RunResult
from engine.lab.peer_server import NO_REPACK, PEER_PREFIX, used_repack_flags
from engine.verify import NEAR_TIE_LOGIT_GAP


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
        "peer": peer_rows(results) if any(r.config.startswith(PEER_PREFIX) for r in results) else [],
        "peer_flags": sorted({" ".join(f) for f in used_repack_flags().values()}),
    }


def format_table(results: list[RunResult]) -> str:
    head = (f"{'workload':<15} {'mode':<8} {'config':<19} {'tok':>5} {'dec t/s':>8} {'wall t/s':>8} {'speedup':>8} "
            f"{'vs llama':>8} {'ttft s':>6} {'tau':>5}  accept by position")
    lines = [head, "-" * len(head)]
    for r in results:
        acc = " ".join(f"{a:.2f}" for a in r.accept_by_pos[:8])
        vs = f"{r.vs_peer_plain:.2f}x" if r.vs_peer_plain is not None else "-"
        same = _greedy_label(r)
        if r.divergence_gap is not None:
            same += f" (top-2 gap {r.divergence_gap:.2f})"
        if r.drift is not None:
            same = f"  (closing plain run {r.drift - 1:+.0%})"
        if r.simulated:
            same += f"  simulated: ngram {r.simulated['ngram']:.2f}x, ceiling {r.simulated['ceiling']:.2f}x"
        if r.drift is None and len(r.round_speedups) > 1:
            same += f"  rounds {min(r.round_speedups):.2f}-{max(r.round_speedups):.2f}x"
        if r.worst_request is not None:
            same += f"  worst request {r.worst_request:.2f}x"
            if r.worst_timed_request is not None:
                same += f" ({r.worst_timed_request:.2f}x of {TIMED_REQUEST}+ tokens"
                if r.worst_timed_steps is not None:
                    same += f"; its steps {r.worst_timed_steps[0]:.1f} ms, plain's {r.worst_timed_steps[1]:.1f} ms"
                same += ")"
            if r.worst_drafted_request is not None or r.undrafted_mean is not None:
                d, u = r.worst_drafted_request, r.undrafted_mean
                same += (f" (of {TIMED_REQUEST}+ tokens: drafting, worst {'-' if d is None else f'{d:.2f}x'}; "
                         f"nothing drafted, mean {'-' if u is None else f'{u:.2f}x'})")
        if r.worst_modelled is not None:
            same += f" (modelled: worst {r.worst_modelled:.2f}x, all {r.modelled:.2f}x)"
        lines.append(
            f"{r.workload:<15} {r.mode:<8} {r.config:<19} {r.tokens:>5} {r.decode_tok_s:>8.2f} {r.wall_tok_s:>8.2f} "
            f"{r.speedup:>7.2f}x {vs:>8} {r.first_token_s:>6.2f} {r.tau:>5.2f}  {acc}{same}"
        )
    return "\n".join(lines)


def summary(results: list[RunResult]) -> dict[str, Any]:
    """Best speculative speedup per workload kind and mode, and greedy equivalence counts."""
    out: dict[str, Any] = {}
    for r in results:
        if r.config in ("plain", "peer-lookup") or r.config.startswith(PEER_PREFIX):
            continue
        key = f"{r.workload}/{r.mode}"
        out.setdefault(key, {})[r.config] = round(r.speedup, 3)
    # tau's own configurations against tau plain (llama-server's replies are set beside it in the peer rows)
    greedy = [r for r in results if r.same_as_plain is not None and not r.config.startswith(PEER_PREFIX)]
    out["greedy_runs_identical_to_plain"] = sum(1 for r in greedy if r.same_as_plain)
    out["greedy_runs_compared"] = len(greedy)
    out["near_tie_divergences"] = sum(r.near_ties for r in results)
    # greedy runs that differ from plain where plain's own choice was a near-tie (batched kernels' rounding)
    out["greedy_differences_at_near_ties"] = sum(
        1 for r in greedy if r.divergence_gap is not None and r.divergence_gap < NEAR_TIE_LOGIT_GAP)
    return out


def peer_rows(results: list[RunResult]) -> list[dict[str, Any]]:
    """Per workload and mode: tau plain and auto beside llama-server plain and its best speculative
    configuration, with the ratios the issue's table asks for (None where a side is missing)."""
    groups: dict[tuple[str, str], dict[str, RunResult]] = {}
    for r in results:
        groups.setdefault((r.workload, r.mode), {})[r.config] = r
    rows = []
    for (wl, mode), by in groups.items():
        lp = by.get(PEER_PREFIX + "plain")
        specs = [r for name, r in by.items() if name.startswith(PEER_PREFIX) and name != PEER_PREFIX + "plain"]
        best = max(specs, key=lambda r: r.decode_tok_s, default=None)
        tp, ta = by.get("plain"), by.get("auto")

        def ratio(a: RunResult | None, b: RunResult | None) -> float | None:
            return round(a.decode_tok_s / b.decode_tok_s, 3) if a and b and b.decode_tok_s else None

        rows.append({
            "workload": wl, "mode": mode,
            "llama_plain": lp.decode_tok_s if lp else None,
            "llama_best": best.decode_tok_s if best else None, "llama_best_config": best.config if best else None,
            "tau_plain": tp.decode_tok_s if tp else None, "tau_auto": ta.decode_tok_s if ta else None,
            "tau_plain_vs_llama_plain": ratio(tp, lp), "tau_auto_vs_llama_best": ratio(ta, best),
            "tau_auto_vs_llama_plain": ratio(ta, lp), "tau_auto_vs_tau_plain": ratio(ta, tp),
            "ttft_tau_auto": ta.first_token_s if ta else None, "ttft_llama_plain": lp.first_token_s if lp else None,
            # greedy: where llama-server plain's and its best's replies part from tau plain's (None: the same reply)
            "llama_plain_same_reply": lp.same_as_plain if lp else None,
            "llama_plain_parts_at": lp.first_divergence if lp else None,
            "llama_best_same_reply": best.same_as_plain if best else None,
            "llama_best_parts_at": best.first_divergence if best else None,
        })
    return rows


def format_peer_table(results: list[RunResult]) -> str:
    """The side-by-side table: decode tok/s and ratios against llama-server plain and best."""
    def f(v: float | None, fmt: str = "{:.1f}") -> str:
        return "-" if v is None else fmt.format(v)

    head = ("| workload | mode | llama plain | llama best (config) | tau plain | tau auto | "
            "tau plain / llama plain | tau auto / llama best | tau auto / llama plain | ttft tau auto / llama | "
            "greedy reply, llama plain / best |")
    lines = [head, "|" + "---|" * 11]
    for row in peer_rows(results):
        best = f"{f(row['llama_best'])} ({row['llama_best_config']})" if row["llama_best"] is not None else "-"
        lines.append(
            f"| {row['workload']} | {row['mode']} | {f(row['llama_plain'])} | {best} | {f(row['tau_plain'])} | "
            f"{f(row['tau_auto'])} | {f(row['tau_plain_vs_llama_plain'], '{:.2f}x')} | "
            f"{f(row['tau_auto_vs_llama_best'], '{:.2f}x')} | {f(row['tau_auto_vs_llama_plain'], '{:.2f}x')} | "
            f"{f(row['ttft_tau_auto'], '{:.2f}')} / {f(row['ttft_llama_plain'], '{:.2f}')} s | "
            f"{_reply(row['llama_plain_same_reply'], row['llama_plain_parts_at'])} / "
            f"{_reply(row['llama_best_same_reply'], row['llama_best_parts_at'])} |"
        )
    if NO_REPACK in used_repack_flags().values():
        lines.append("llama-server ran with --no-repack: with its default repacked weights it crashed on a batched prompt here")
    return "\n".join(lines)


def _reply(same: bool | None, parts_at: int | None) -> str:
    """A llama-server reply beside tau plain's: the same text, or the token where they part."""
    if same is None:
        return "-"
    return "same as tau's" if same else f"parts at {parts_at}"


def _greedy_label(r: RunResult) -> str:
    """A greedy run beside plain's reply (a llama-server run: beside tau plain's), or nothing."""
    if r.same_as_plain is None:
        return ""
    if r.config.startswith(PEER_PREFIX):
        return "  =tau plain" if r.same_as_plain else f"  parts from tau plain@{r.first_divergence}"
    return "  =plain" if r.same_as_plain else f"  differs@{r.first_divergence}"
