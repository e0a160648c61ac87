"""Every recording the project keeps, replayed under three machines' curves: one line per curve.

    python -m engine.lab.replay_sweep [--json] [--edits]

New code and edits (their geomean and worst speedup over plain) and the long runs (each run's
speedup and its worst request), under this Zen 5's curve, the s24 AVX-512 EPYC's and the H200's
(padded to 16/64 rows, plain steps overlapped); ``--edits`` adds each edit's speedup and its
ceiling (the fastest any window policy could take with the same proposals). Run it at two commits
to compare policies on the same outputs without the machine's noise (engine/lab/MEASUREMENTS.md);
each recording is replayed alone, since some share workload names.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from statistics import geometric_mean

from engine.lab.replay import replay

RESULTS = Path(__file__).parent / "benchdata" / "results"
GPU_RESULTS = Path(__file__).parent / "gpu" / "results"
LONG = ("cpu2-epyc-avx512-replay-long-outputs-s23.json", "cpu2-epyc-avx512-replay-long-outputs-s30.json")
CURVES = {  # name: (a result file with its verify_curve, pad widths, overlapped plain steps)
    "zen5": (RESULTS / "cpu2-epyc-zen5-long-paired-s43.json", "", False),
    "avx512": (RESULTS / "cpu2-epyc-avx512-long-paired-s24.json", "", False),
    "h200": (GPU_RESULTS / "h200-real-heldout11-peer-s22.json", "16,64", True),
}


def recordings() -> list[Path]:
    """The single-request recordings (the long runs are replayed apart, as served in a row)."""
    return sorted(p for p in RESULTS.glob("*replay*outputs*.json") if "-long-" not in p.name)


def sweep() -> dict[str, dict]:
    out: dict[str, dict] = {}
    for name, (curve, pad, overlap) in CURVES.items():
        rows = {f"{f.stem}/{k}": w for f in recordings() for k, w in replay(f, curve, pad, overlap)["workloads"].items()}
        new = [w["speedup"] for w in rows.values() if w["kind"] == "new"]
        edits = {k: w for k, w in rows.items() if w["kind"] == "edit"}
        edit_speedups = [w["speedup"] for w in edits.values()]
        runs = [w for f in LONG for w in replay(RESULTS / f, curve, pad, overlap)["workloads"].values()]
        out[name] = {"new_geomean": round(geometric_mean(new), 4), "new_worst": min(new),
                     "edits_geomean": round(geometric_mean(edit_speedups), 4), "edits_worst": min(edit_speedups),
                     "long": [w["speedup"] for w in runs], "long_worst_request": [min(w["requests"]) for w in runs],
                     "edits": {k: [w["speedup"], w["ceiling"]] for k, w in edits.items()}}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.lab.replay_sweep", description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--edits", action="store_true", help="each edit's speedup and ceiling too")
    args = ap.parse_args(argv)
    res = sweep()
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    for name, r in res.items():
        print(f"{name:7} new {r['new_geomean']:.4f} (worst {r['new_worst']:.3f})  edits {r['edits_geomean']:.4f} "
              f"(worst {r['edits_worst']:.3f})  long {r['long']} (worst request {r['long_worst_request']})")
        if args.edits:
            for k, (speedup, ceiling) in r["edits"].items():
                print(f"    {k:72} {speedup:.3f}x (ceiling {ceiling:.3f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
