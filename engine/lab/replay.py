"""Record the plain outputs of bench workloads once, then replay the policy on them in virtual time.

    python -m engine.lab.replay record --suites edits,new,heldout --out outputs.json [--model X.gguf] [--sampled SEED]
    python -m engine.lab.replay replay outputs.json [more.json ...] [--curve RESULT.json] [--json]

``record`` decodes each workload's first turn greedily (lossless: what any configuration emits),
or sampled at the agent's temperature 0.6, top-p 0.95 with ``--sampled SEED`` (one draw of what
any configuration emits: sampled outputs stray from the source more often than greedy ones), and
keeps its prompt tokens, its output and the machine's verify-cost curve. ``replay`` runs the
shipped loop and policy against each output (``engine.lab.simulate``) and the ceiling of any
window policy with the same overlay, so two versions of the policy can be compared on the same
outputs and the same costs without the machine's noise: run ``replay`` at each commit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from statistics import geometric_mean

from engine.widths import fixed_widths, padded_curve


def record(suites: list[str], out: Path, model: str, seed: int | None = None) -> None:
    from engine.config import EngineConfig
    from engine.lab.benchdata.workloads import SUITES
    from engine.lab.benchsim import turn_prompt
    from engine.local import LocalEngine
    from engine.paths import cache_dir
    from engine.types import GenerateRequest, SamplingParams, generate

    eng = LocalEngine.load(EngineConfig(model_path=model, n_ctx=8192, cache_dir=str(cache_dir()), calibrate=True))
    try:
        curve = {str(k): float(v) for k, v in eng.profile["verify_curve"].items()}
        eog = eng.gguf.metadata.get("tokenizer.ggml.eos_token_id")  # the chat model's end of turn
        rows: dict[str, dict] = {}
        sampling = (SamplingParams(temperature=0.0) if seed is None
                    else SamplingParams(temperature=0.6, top_p=0.95, seed=seed))
        for suite in suites:
            for wl in SUITES[suite]:
                if wl.name in rows:
                    continue
                turns = []
                for turn in wl.turns if wl.kind == "long" else wl.turns[:1]:  # a long run: every request
                    prompt = turn_prompt(eng, turn)
                    done = generate(eng, GenerateRequest(tuple(prompt), max_tokens=wl.max_tokens,
                                                         sampling=sampling))
                    # a reply that ended (not cut at its limit) ended with the end-of-turn token
                    end = {"eog": eog} if done.finish_reason == "stop" and eog is not None else {}
                    turns.append({"prompt": prompt, "output": list(done.token_ids), "max_tokens": wl.max_tokens, **end})
                    print(f"{wl.name}: {len(done.token_ids)} tokens", file=sys.stderr, flush=True)
                rows[wl.name] = {"kind": wl.kind, "turns": turns} if wl.kind == "long" else {"kind": wl.kind, **turns[0]}
    finally:
        eng.close()
    out.write_text(json.dumps({"verify_curve": curve, "workloads": rows}), encoding="utf-8")


def pad_table(pad: str) -> tuple[int, ...]:
    """The pad widths of ``--pad 16,64`` (a GPU's captured graphs) as engine.widths pads passes."""
    return fixed_widths(tuple(int(w) for w in pad.split(","))) if pad else ()


def replay(path: Path | list[Path], curve_from: Path | None = None, pad: str = "", overlap: bool = False) -> dict:
    """One recording or several (their workloads summarized together, each under its own curve
    unless ``curve_from``). ``curve_from``: a JSON file whose ``verify_curve`` replaces the
    recording's (another machine's); ``pad``: verify passes padded up to these widths ("16,64": a
    GPU's), as engine.widths pads them; ``overlap``: plain steps started before the pick, as on a
    GPU (engine.decoder.Target.overlap)."""
    from engine.lab.simulate import ceiling, simulate

    forced = json.loads(curve_from.read_text(encoding="utf-8"))["verify_curve"] if curve_from else None
    table = pad_table(pad)
    out: dict[str, dict] = {}
    for one in path if isinstance(path, list) else [path]:
        data = json.loads(one.read_text(encoding="utf-8"))
        curve = {int(k): float(v) for k, v in (forced or data["verify_curve"]).items()}
        for name, wl in data["workloads"].items():
            if name in out:
                raise ValueError(f"{one}: workload {name} is in an earlier recording too")
            if wl["kind"] == "long":
                out.update(_served(name, wl["turns"], curve, table, overlap))
                continue
            s = simulate(wl["prompt"], wl["output"], curve, pad_table=table, overlap=overlap, eog=wl.get("eog"),
                         max_tokens=wl.get("max_tokens", 0))
            plain, best = ceiling(wl["prompt"], wl["output"], padded_curve(curve, table))
            out[name] = {"kind": wl["kind"], "speedup": round(s.speedup, 3), "tau": round(s.tau, 2),
                         "ceiling": round(plain / best, 3) if best else 1.0}
    edits = [r["speedup"] for r in out.values() if r["kind"] == "edit"]
    new = [r["speedup"] for r in out.values() if r["kind"] == "new"]
    summary = {"edits_geomean": round(geometric_mean(edits), 3) if edits else None,
               "edits_worst": min(edits, default=None), "new_worst": min(new, default=None)}
    for name, r in out.items():
        if r["kind"] == "long":
            summary[f"{name} worst"] = min(r["requests"])
    return {"workloads": out, "summary": summary}


def _served(name: str, turns: list[dict], curve: dict[int, float], table: tuple[int, ...] = (),
            overlap: bool = False) -> dict[str, dict]:
    """A long run's requests in a row through one engine's speculation state: the whole run's
    speedup and each request's (the bar: none below plain). Greedy only: on a recorded output the
    sampled loop takes the same passes (the oracle puts all p on the recorded token)."""
    from engine.lab.simulate import Served, simulate_served

    res = simulate_served([Served(t["prompt"], t["output"], "greedy", t.get("eog"), t.get("max_tokens", 0)) for t in turns],
                          curve, pad_table=table, overlap=overlap)
    plain, spec = sum(r.plain_s for r in res), sum(r.spec_s for r in res)
    out = {f"{name}/greedy": {"kind": "long", "speedup": round(plain / spec, 3) if spec else 1.0,
                              "tau": round(sum(r.tau for r in res) / len(res), 2) if res else 1.0, "ceiling": 0.0,
                              "requests": [round(r.speedup, 3) for r in res]}}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.lab.replay", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--suites", default="edits,new,heldout")
    r.add_argument("--out", required=True)
    r.add_argument("--model", default="")
    r.add_argument("--sampled", type=int, default=None, metavar="SEED",
                   help="sample at temperature 0.6, top-p 0.95 with this seed instead of greedy")
    p = sub.add_parser("replay")
    p.add_argument("outputs", nargs="+", help="recordings, summarized together")
    p.add_argument("--json", action="store_true")
    p.add_argument("--curve", default="", help="a JSON file with another machine's verify_curve (a bench result)")
    p.add_argument("--pad", default="", help="verify passes padded up to these widths, such as 16,64 (a GPU's)")
    p.add_argument("--overlap", action="store_true", help="plain steps started before the pick (a GPU's loop)")
    args = ap.parse_args(argv)
    if args.cmd == "record":
        from engine.modelpack import default_target_path

        record(args.suites.split(","), Path(args.out), args.model or str(default_target_path()), args.sampled)
        return 0
    res = replay([Path(o) for o in args.outputs], Path(args.curve) if args.curve else None, args.pad, args.overlap)
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print("| workload | policy | ceiling | tau |\n|---|---|---|---|")
    for name, w in res["workloads"].items():
        print(f"| {name} | {w['speedup']:.3f}x | {w['ceiling']:.3f}x | {w['tau']:.2f} |")
    for key, v in res["summary"].items():
        if v is not None:  # a recording without edits has no edit mean
            print(f"{key}: {v}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
