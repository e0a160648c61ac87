"""One recorded output replayed pick by pick: what the policy chose at each position beside what
the overlay could have copied there, and where its time went against the ceiling (windows that
broke before their end, plain steps with a copy to take). The traced findings in MEASUREMENTS.md
(failed resync windows, echo copies sat out) are counted this way.

    python -m engine.lab.trace RECORDING WORKLOAD [--curve F] [--pad 16,64] [--overlap] [--rows A:B]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.drafters.base import Draft
from engine.drafters.ngram import NgramDrafter
from engine.lab.replay import pad_table
from engine.lab.simulate import matches, simulate
from engine.policy import CostCurve
from engine.shadow import Shadow
from engine.slot import DrafterSlot
from engine.spec import DEFAULT_MAX_WINDOW, SpecConfig
from engine.speculator import Speculator
from engine.widths import padded_curve

MISS_MIN = 4  # a plain step with at least this many tokens the overlay would have copied counts as a miss


@dataclass(frozen=True)
class Pick:
    position: int  # output tokens before the pass
    window: int  # drafted tokens verified (0: a plain pass)
    bucket: int  # the draft's bucket, or the unverified proposal's (-1: none)
    available: int  # tokens of the overlay's proposal the output matches here
    following: tuple[int, int] | None  # the followed proposal's (bucket, tokens matched)


class TracingSpeculator(Speculator):
    """The shipped speculator, recording every pick (the policy itself is not changed)."""

    def __init__(self, curve: CostCurve, drafters: dict[str, DrafterSlot], *, prompt_len: int,
                 available: Sequence[int]) -> None:
        super().__init__(curve, drafters)
        self.prompt_len, self.available = prompt_len, available
        self.picks: list[Pick] = []

    def pick(self, hist: list[int], spec: SpecConfig, mode: str, room: int,
             following: Shadow | None = None) -> tuple[Draft | None, int]:
        d, bucket = super().pick(hist, spec, mode, room, following)
        i = len(hist) - self.prompt_len
        shown = bucket if d is not None else (self.unverified.bucket if self.unverified is not None else -1)
        self.picks.append(Pick(i, len(d.tokens) if d is not None else 0, shown,
                               self.available[i] if i < len(self.available) else 0,
                               (following.bucket, following.matched) if following is not None else None))
        return d, bucket


def trace(workload: dict, curve_points: dict[int, float], *, pad: tuple[int, ...] = (),
          overlap: bool = False) -> tuple[float, list[Pick]]:
    """(speedup over plain, the picks) for one recorded workload."""
    prompt, output = workload["prompt"], workload["output"]
    available = matches(prompt, output, NgramDrafter(), DEFAULT_MAX_WINDOW)
    d = NgramDrafter()
    spec = TracingSpeculator(CostCurve(padded_curve(curve_points, pad)), {d.name: DrafterSlot(d, lookup=True)},
                             prompt_len=len(prompt), available=available)
    sim = simulate(prompt, output, curve_points, speculator=spec, pad_table=pad, overlap=overlap,
                   eog=workload.get("eog"), max_tokens=workload.get("max_tokens", 0))
    return sim.speedup, spec.picks


def losses(picks: Sequence[Pick], curve_points: dict[int, float]) -> dict[str, float]:
    """Plain steps' worth lost in windows that broke before their end (by bucket), and plain
    steps taken with MISS_MIN or more tokens to copy (by bucket)."""
    curve = CostCurve(dict(curve_points))
    out: dict[str, float] = {}
    for p in picks:
        if p.window and p.available < p.window:
            key = f"broken b{p.bucket}"
            out[key] = out.get(key, 0.0) + curve.relative(p.window + 1) - curve.relative(p.available + 1)
        elif not p.window and p.available >= MISS_MIN:
            key = f"missed b{p.bucket}"
            out[key] = out.get(key, 0.0) + 1.0
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.lab.trace", description=__doc__.split("\n\n")[0])
    ap.add_argument("recording", type=Path, help="a JSON file from `python -m engine.lab.replay record`")
    ap.add_argument("workload", help="the workload's name in it")
    ap.add_argument("--curve", type=Path, help="a JSON file whose verify_curve replaces the recording's")
    ap.add_argument("--pad", default="", help="pad passes to these widths (a GPU's captured graphs)")
    ap.add_argument("--overlap", action="store_true", help="plain steps start before the pick, as on a GPU")
    ap.add_argument("--rows", default="", help="only the picks at output positions A:B")
    args = ap.parse_args(argv)
    data = json.loads(args.recording.read_text(encoding="utf-8"))
    if args.workload not in data["workloads"]:
        raise SystemExit(f"trace: no workload {args.workload!r} in {args.recording} "
                         f"(it has {', '.join(data['workloads'])})")
    source = json.loads(args.curve.read_text(encoding="utf-8")) if args.curve else data
    curve = {int(k): float(v) for k, v in source["verify_curve"].items()}
    speedup, picks = trace(data["workloads"][args.workload], curve, pad=pad_table(args.pad), overlap=args.overlap)
    lo, _, hi = args.rows.partition(":")
    for p in picks:
        if (lo and p.position < int(lo)) or (hi and p.position >= int(hi)):
            continue
        fol = f"{p.following[0]}/{p.following[1]}" if p.following else "-"
        flag = f"  <- missed {p.available}" if not p.window and p.available >= MISS_MIN else ""
        print(f"{p.position:5d} window {p.window:2d} bucket {p.bucket:3d} available {p.available:2d} following {fol}{flag}")
    print(f"speedup {speedup:.3f}, {len(picks)} picks;", json.dumps({k: round(v, 1) for k, v in losses(picks, curve).items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
