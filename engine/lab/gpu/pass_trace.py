"""Where a speculative decode's time goes, pass by pass: the device pass (``llama_decode`` through
the logits), the pick, verification on the host, and the loop's own remainder, beside what the
load-time verify curve says those passes cost (what ``tau bench``'s modelled speedup charges).

    python -m engine.lab.gpu.pass_trace TARGET.gguf SUITE OUT.json [CONFIGS] [MODES] [THREADS]

THREADS: verify row threads to compare, e.g. 0,8 (engine.rowpool; default: the engine's own).

The context, the speculator and ``engine.decoder.verify`` are wrapped with timers for the run
(a diagnostic: the runtime itself keeps no per-pass log). Steps right after a multi-row pass
are reported apart: on a CUDA build llama.cpp re-captures its graph for them.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from engine import (
    backend,  # noqa: F401  (llama_cpp before numpy)
    decoder,
)
from engine.config import EngineConfig
from engine.lab.bench import CONFIGS, run_config
from engine.lab.benchdata.workloads import SUITES
from engine.local import LocalEngine
from engine.rowpool import RowPool

AFTER = 2  # single steps after a multi-row pass reported apart


class Recorder:
    """Timed calls, in order: (kind, seconds, rows)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, float, int]] = []
        self.depth = 0

    def wrap(self, kind: str, fn: Callable, rows: Callable[..., int] = lambda *a, **k: 0) -> Callable:
        def timed(*args, **kwargs):
            if self.depth:  # nested in another timed call: counted there
                return fn(*args, **kwargs)
            self.depth += 1
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.events.append((kind, time.perf_counter() - t0, rows(*args, **kwargs)))
                self.depth -= 1

        return timed


def instrument(eng: LocalEngine, rec: Recorder) -> None:
    ctx = eng.target.ctx
    # a prompt's prefill asks for the last row's logits only: -1 marks it (not a decode pass)
    ctx.decode = rec.wrap("pass", ctx.decode, lambda toks, pos, all_logits: len(toks) if all_logits or len(toks) == 1 else -1)
    if hasattr(ctx, "submit"):
        ctx.submit = rec.wrap("submit", ctx.submit, lambda *a, **k: 1)
        ctx.collect = rec.wrap("collect", ctx.collect, lambda *a, **k: 1)
    sp = eng.speculator
    sp.pick = rec.wrap("pick", sp.pick)  # type: ignore[method-assign]
    decoder.verify = rec.wrap("verify", decoder.verify)


def summarize(events: list[tuple[str, float, int]], curve, decode_s: float) -> dict:
    """Per-rows device time against the curve, steps after passes apart, and host totals."""
    by_rows: dict[int, list[float]] = defaultdict(list)
    after: list[float] = []
    totals: dict[str, float] = defaultdict(float)
    since = AFTER + 1  # single steps since the last multi-row pass
    modelled = 0.0
    pending_submit = 0.0
    for kind, dt, rows in events:
        totals[kind] += dt
        if kind == "submit":
            pending_submit = dt
            continue
        if kind == "collect":
            kind, dt, rows = "pass", pending_submit + dt, 1  # the overlapped step: launch plus wait
        if kind != "pass" or rows < 0:
            continue
        modelled += curve.cost(rows)
        if rows == 1:
            (after if since < AFTER else by_rows[1]).append(dt)
            since += 1
        else:
            by_rows[rows].append(dt)
            since = 0
    device = sum(sum(v) for v in by_rows.values()) + sum(after)
    host = {k: round(v, 4) for k, v in totals.items() if k not in ("pass", "submit", "collect")}
    return {
        "decode_s": round(decode_s, 4),
        "device_s": round(device, 4),
        "modelled_device_s": round(modelled, 4),
        "host_s": host,
        "other_s": round(decode_s - device - sum(host.values()), 4),
        "rows": {n: {"count": len(v), "mean_ms": round(1000 * sum(v) / len(v), 3), "curve_ms": round(1000 * curve.cost(n), 3)}
                 for n, v in sorted(by_rows.items())},
        "after_pass_steps": {"count": len(after), "mean_ms": round(1000 * sum(after) / len(after), 3) if after else None},
    }


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4, 5, 6):
        print(__doc__, file=sys.stderr)
        return 2
    target, suite, out = argv[:3]
    names = argv[3].split(",") if len(argv) > 3 else ["plain", "auto"]
    modes = argv[4].split(",") if len(argv) > 4 else ["greedy", "sampled"]
    counts = [int(t) for t in argv[5].split(",")] if len(argv) > 5 else []
    cfg = EngineConfig(model_path=target, draft_model_path=None, cache_dir="/tmp/tau-cache",
                       log_path="/tmp/tau-cache/llama.log", gpu_layers=-1, n_ctx=8192)
    chosen = [next(c for c in CONFIGS if c.name == name) for name in names]
    eng = LocalEngine(cfg, progress=lambda m, f: None)
    # each count's pool made once (the engine's own when none are named)
    own = eng.row_pool
    pools = [RowPool(n) if n >= 2 else None for n in counts] or [own]
    rec = Recorder()
    report: list[dict] = []
    try:
        eng.call(lambda: instrument(eng, rec))
        curve = eng.speculator.curve
        print("curve ms:", {n: round(1000 * s, 3) for n, s in curve.points.items()}, flush=True)
        for wl in SUITES[suite]:
            for mode in modes:
                for bc in chosen:
                    for pool in pools:
                        eng.row_pool = pool
                        rec.events.clear()
                        r = run_config(eng, wl, mode, bc)
                        s = summarize(list(rec.events), curve, r.decode_s)
                        s.update(workload=wl.name, mode=mode, config=bc.name, tok_s=round(r.decode_tok_s, 1),
                                 tau=round(r.tau, 2), modelled=r.modelled, tokens=r.tokens,
                                 threads=pool.threads if pool is not None else 0)
                        report.append(s)
                        print(json.dumps(s), flush=True)
    finally:
        eng.row_pool = own  # the engine closes its own pool; the ones made for the counts are closed here
        eng.close()
        for pool in pools:
            if pool is not None and pool is not own:
                pool.close()
    Path(out).write_text(json.dumps({"suite": suite, "curve": curve.points, "runs": report}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
