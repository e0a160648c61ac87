"""The verify curve's shape as this machine runs it now, beside the profile's.

    python -m engine.lab.curveshape [--reps 6] [--rows 4,8,16,32,64]

Each width is timed ``reps`` times, every pass between two single-row steps after the same warm
context as the calibration's (``engine.costs``), on the decode context in its calibrated layout;
prints each width's cost in single steps, fastest over fastest and median over median. On a
shared host the shape moves with the neighbours' load: wide passes are bound by arithmetic and
single steps by memory, so the curve measured at first load may no longer hold.
"""

from __future__ import annotations

import argparse
import json

from engine import backend  # noqa: F401  (llama_cpp before numpy)


def main(argv: list[str] | None = None) -> int:
    import numpy as np

    from engine.config import EngineConfig
    from engine.costs import time_pass, warm_up
    from engine.local import LocalEngine
    from engine.modelpack import default_target_path
    from engine.paths import cache_dir

    ap = argparse.ArgumentParser(prog="python -m engine.lab.curveshape")
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--rows", default="4,8,16,32,64")
    args = ap.parse_args(argv)
    rows = [int(r) for r in args.rows.split(",")]
    eng = LocalEngine.load(EngineConfig(model_path=str(default_target_path()), n_ctx=4096, cache_dir=str(cache_dir()),
                                        calibrate=True))
    try:
        ctx, saved = eng.ctx, eng.profile.get("verify_curve", {})
        rng = np.random.default_rng(0)
        lo, hi, n_warm = warm_up((ctx,), eng.model.n_vocab, max(rows), rng)

        def timed(n: int) -> float:
            return time_pass(ctx, [int(t) for t in rng.integers(lo, hi, n)], n_warm)

        for _ in range(4):  # first-use costs
            timed(1)
        seen: dict[int, list[float]] = {n: [] for n in [1, *rows]}
        for _ in range(args.reps):
            for n in rows:
                seen[n].append(timed(n))
                seen[1] += [timed(1), timed(1)]
        ctx.truncate(0)
        fast1, med1 = min(seen[1]), float(np.median(seen[1]))
        base = float(saved.get("1", 0.0))
        by_rows: dict[str, dict[str, float | None]] = {}
        for n in rows:
            prof = float(saved[str(n)]) / base if base and str(n) in saved else None
            by_rows[str(n)] = {"fastest": round(min(seen[n]) / fast1, 2), "median": round(float(np.median(seen[n])) / med1, 2),
                                   "profile": round(prof, 2) if prof is not None else None}
        step = {"fastest": round(fast1 * 1e3, 1), "median": round(med1 * 1e3, 1)}
        print(json.dumps({"step_ms": step, "rows": by_rows}, indent=1))
    finally:
        eng.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
