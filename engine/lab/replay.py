"""Record the plain outputs of bench workloads once, then replay the policy on them in virtual time.

    python -m engine.lab.replay record --suites edits,new,heldout --out outputs.json [--model X.gguf]
    python -m engine.lab.replay replay outputs.json [--json]

``record`` decodes each workload's first turn greedily (lossless: what any configuration emits)
and keeps its prompt tokens, its output and the machine's verify-cost curve. ``replay`` runs the
shipped loop and policy against each output (``engine.lab.simulate``) and the ceiling of any
window policy with the same overlay, so two versions of the policy can be compared on the same
outputs and the same costs without the machine's noise: run ``replay`` at each commit.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def record(suites: list[str], out: Path, model: str) -> None:
    from engine.config import EngineConfig
    from engine.lab.benchdata.workloads import SUITES
    from engine.lab.benchsim import turn_prompt
    from engine.local import LocalEngine
    from engine.paths import cache_dir
    from engine.types import GenerateRequest, SamplingParams, generate

    eng = LocalEngine.load(EngineConfig(model_path=model, n_ctx=8192, cache_dir=str(cache_dir()), calibrate=True))
    try:
        curve = {str(k): float(v) for k, v in eng.profile["verify_curve"].items()}
        rows: dict[str, dict] = {}
        for suite in suites:
            for wl in SUITES[suite]:
                if wl.name in rows or wl.kind == "long":
                    continue
                prompt = turn_prompt(eng, wl.turns[0])
                done = generate(eng, GenerateRequest(tuple(prompt), max_tokens=wl.max_tokens,
                                                     sampling=SamplingParams(temperature=0.0)))
                rows[wl.name] = {"kind": wl.kind, "prompt": prompt, "output": list(done.token_ids)}
                print(f"{wl.name}: {len(done.token_ids)} tokens", file=sys.stderr, flush=True)
    finally:
        eng.close()
    out.write_text(json.dumps({"verify_curve": curve, "workloads": rows}), encoding="utf-8")


def replay(path: Path) -> dict:
    from engine.lab.simulate import ceiling, simulate

    data = json.loads(path.read_text(encoding="utf-8"))
    curve = {int(k): float(v) for k, v in data["verify_curve"].items()}
    out: dict[str, dict] = {}
    for name, wl in data["workloads"].items():
        s = simulate(wl["prompt"], wl["output"], curve)
        plain, best = ceiling(wl["prompt"], wl["output"], curve)
        out[name] = {"kind": wl["kind"], "speedup": round(s.speedup, 3), "tau": round(s.tau, 2),
                     "ceiling": round(plain / best, 3) if best else 1.0}
    edits = [r["speedup"] for r in out.values() if r["kind"] == "edit"]
    summary = {"edits_geomean": round(math.exp(sum(map(math.log, edits)) / len(edits)), 3) if edits else None}
    return {"workloads": out, "summary": summary}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.lab.replay", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--suites", default="edits,new,heldout")
    r.add_argument("--out", required=True)
    r.add_argument("--model", default="")
    p = sub.add_parser("replay")
    p.add_argument("outputs")
    p.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "record":
        from engine.modelpack import default_target_path

        record(args.suites.split(","), Path(args.out), args.model or str(default_target_path()))
        return 0
    res = replay(Path(args.outputs))
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print("| workload | policy | ceiling | tau |\n|---|---|---|---|")
    for name, w in res["workloads"].items():
        print(f"| {name} | {w['speedup']:.3f}x | {w['ceiling']:.3f}x | {w['tau']:.2f} |")
    print(f"edits, geometric mean: {res['summary']['edits_geomean']}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
