"""Wide verify passes on the other CPU weight layout (engine.sideverify), measured.

    python -m engine.lab.sidewide ratios                 # side/decode cost of n-row passes, alternately
    python -m engine.lab.sidewide ab --suite edits --rounds 2 [--modes greedy,sampled]
    python -m engine.lab.sidewide windows --suite edits --rounds 1

``windows`` compares, the same way, windows of 40 with the request calibration scaling the
rates (the rule before session 14, A) against windows of 63 with it dividing failure rates (B).

``ab`` runs every workload's first turn with ``auto`` twice in one engine, back to back, with
the sequence moving to the side for wide passes (B) and kept on the decode context (A), in
alternating order, each run from fresh speculation state: on this shared 2-core host the
machine's drift between two bench runs minutes apart is larger than the difference.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable


def _load():
    from engine.config import EngineConfig
    from engine.local import LocalEngine
    from engine.modelpack import default_draft_path, default_target_path
    from engine.paths import cache_dir

    return LocalEngine.load(EngineConfig(model_path=str(default_target_path()), draft_model_path=str(default_draft_path()),
                                         n_ctx=8192, cache_dir=str(cache_dir()), calibrate=True))


def ratios() -> dict:
    from engine.sideverify import measure_ratios

    eng = _load()
    try:
        if eng.side_ctx is None:
            return {"error": "no side context on this machine (calibration found no faster prefill layout)"}
        r = measure_ratios(eng.ctx, eng.side_ctx, eng.model.n_vocab)
        eng.ctx.decode(list(range(100, 1600)), 0, all_logits=False)
        t0 = time.perf_counter()
        ok = eng.ctx.copy_seq_to(eng.side_ctx) and eng.side_ctx.copy_seq_to(eng.ctx)
        copy = (time.perf_counter() - t0) / 2
        return {"ratios": {str(k): round(v, 3) for k, v in r.items()}, "copy_1500_ms": round(copy * 1e3, 1) if ok else None}
    finally:
        eng.close()


def _paired(eng, suite: str, rounds: int, modes: list[str], arm: Callable[[str], None]) -> dict:
    """Every workload's first turn with ``auto`` in arms A and B back to back (order alternating
    by round), each run from fresh speculation state after ``arm(name)`` set the engine up."""
    from engine.lab.benchdata.workloads import SUITES
    from engine.lab.benchsim import turn_prompt
    from engine.policy import Acceptance
    from engine.types import GenerateRequest, SamplingParams, generate

    sampling = {"greedy": SamplingParams(temperature=0.0), "sampled": SamplingParams(temperature=0.6, top_p=0.95, seed=7)}
    runs: list[dict] = []
    tot = {"A": [0, 0.0], "B": [0, 0.0]}
    for r in range(rounds):
        for wl in SUITES[suite]:
            prompt = turn_prompt(eng, wl.turns[0])
            for mode in modes:
                for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
                    eng.target.home()
                    eng.target.rollback(0)
                    arm(name)
                    eng.speculator.curves = {}
                    eng.speculator.acceptance = Acceptance()
                    eng.ngram.reset()
                    moves = eng.target.moves
                    done = generate(eng, GenerateRequest(tuple(prompt), max_tokens=wl.max_tokens,
                                                         sampling=sampling[mode], spec="auto"))
                    st = done.stats
                    tot[name][0] += st.completion_tokens
                    tot[name][1] += st.decode_s
                    row = {"workload": wl.name, "mode": mode, "arm": name, "round": r,
                           "tok_s": round(st.completion_tokens / st.decode_s, 2) if st.decode_s else 0.0,
                           "tau": round(st.tau, 2), "moves": eng.target.moves - moves,
                           "rows": {str(k): v for k, v in sorted(st.pass_rows.items())}}
                    runs.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
    a, b = (tot[k][0] / tot[k][1] if tot[k][1] else 0.0 for k in ("A", "B"))
    return {"runs": runs, "tok_s": {"A": round(a, 2), "B": round(b, 2)}, "b_over_a": round(b / a, 3) if a else None}


def ab(suite: str, rounds: int, modes: list[str]) -> dict:
    """A: every pass on the decode context; B: wide passes on the side (the shipped rule)."""
    from engine.policy import CostCurve

    eng = _load()
    try:
        wide = eng.target.wide
        if wide is None:
            return {"error": "wide passes stay on the decode context on this machine (no side context, or none cheaper)"}
        points = {int(k): float(v) for k, v in eng.profile["verify_curve"].items()}
        curves = {"A": points, "B": wide.effective(points)}

        def arm(name: str) -> None:
            eng.target.wide = wide if name == "B" else None
            eng.speculator.curve = CostCurve(curves[name])

        res = _paired(eng, suite, rounds, modes, arm)
        eng.target.wide = wide
        return res
    finally:
        eng.close()


def _old_scaled(self, rates: list[float]) -> list[float]:
    """The request calibration's rule before session 14: the rates times the factor."""
    f = self.factor
    return rates if f >= 1.0 else [r * f for r in rates]


def windows(suite: str, rounds: int, modes: list[str]) -> dict:
    """A: windows of 40 and the old calibration rule; B: 63 and the shipped one (the side on in both)."""
    from engine.requestcal import RequestCalibration

    new_scaled = RequestCalibration.scaled
    eng = _load()

    def arm(name: str) -> None:
        RequestCalibration.scaled = _old_scaled if name == "A" else new_scaled  # type: ignore[method-assign]
        eng._max_window = 40 if name == "A" else 63

    try:
        return _paired(eng, suite, rounds, modes, arm)
    finally:
        RequestCalibration.scaled = new_scaled  # type: ignore[method-assign]
        eng.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.lab.sidewide", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("ratios")
    for name in ("ab", "windows"):
        p = sub.add_parser(name)
        p.add_argument("--suite", default="edits")
        p.add_argument("--rounds", type=int, default=2 if name == "ab" else 1)
        p.add_argument("--modes", default="greedy,sampled")
        p.add_argument("--out", default="")
    args = ap.parse_args(argv)
    if args.cmd == "ratios":
        res = ratios()
    else:
        res = (ab if args.cmd == "ab" else windows)(args.suite, args.rounds, args.modes.split(","))
    text = json.dumps(res, indent=1)
    if getattr(args, "out", ""):
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    print(text if args.cmd == "ratios" else json.dumps({k: v for k, v in res.items() if k != "runs"}))
    return 1 if "error" in res else 0


if __name__ == "__main__":
    raise SystemExit(main())
