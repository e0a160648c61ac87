"""The decode loop's host work per pass, plain against auto, on recorded outputs.

    python -m engine.lab.hostwork outputs.json [--mode greedy|sampled] [--reps 3] [--kind new]

On a GPU a plain step of the 1.5B takes about 2 ms, and what the loop does on the host between
passes (sampling, the overlay's lookup, the policy, the bookkeeping) is a few percent of it: the
part of ``auto``'s loss to plain on new code that no verify pass explains. This measures it on any
machine: the shipped loop runs against the recorded output (``engine.lab.simulate``'s oracle,
rows of the real vocabulary so sampling costs what it does) on the real clock, and the oracle's
own time (building the rows) is taken out. The figures are this CPU's; a GPU host's core is
faster, but the ratio between two versions of the loop carries over.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.decoder import run
from engine.drafters.ngram import NgramDrafter
from engine.lab.simulate import OracleContext, VirtualClock, _Tokens
from engine.policy import CostCurve
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams

VOCAB = 151_936  # Qwen2.5's: sampling a row costs what it costs in a real run


class _TimedOracle(OracleContext):
    """The oracle, its decode calls timed (their time is the model's, not the loop's)."""

    spent = 0.0

    def decode(self, tokens: Sequence[int], pos: int, *, all_logits: bool) -> np.ndarray:
        t = time.perf_counter()
        rows = super().decode(tokens, pos, all_logits=all_logits)
        self.spent += time.perf_counter() - t
        return rows


@dataclass(frozen=True)
class HostWork:
    passes: int
    tokens: int
    host_s: float  # the loop's time without the model's

    @property
    def us_per_token(self) -> float:
        return 1e6 * self.host_s / max(1, self.tokens)


def measure(prompt: Sequence[int], output: Sequence[int], curve: dict[int, float], *, auto: bool,
            mode: str = "greedy") -> HostWork:
    """One replay of ``output`` on the real clock; the oracle's decode time is left out."""
    clock = VirtualClock()  # the curve's virtual time: only the policy's cost model reads it
    ctx = _TimedOracle(prompt, output, VOCAB, CostCurve(dict(curve)), clock)
    d = NgramDrafter()
    speculator = Speculator(CostCurve(dict(curve)), {d.name: DrafterSlot(d, lookup=True)})
    spec = SpecConfig(drafters=(d.name,)) if auto else SpecConfig(drafters=())
    sampling = SamplingParams(temperature=0.0) if mode == "greedy" else SamplingParams(temperature=0.6, top_p=0.95, seed=1)
    req = GenerateRequest(tuple(prompt), max_tokens=len(output), sampling=sampling)

    t0 = time.perf_counter()  # the loop reads virtual time (its cost model); this is the real clock
    done = run(Target(ctx), _Tokens(), prompt, req, spec, speculator, lambda _e: None, clock=clock)
    wall = time.perf_counter() - t0
    if mode == "greedy" and list(done.token_ids) != list(output):
        raise RuntimeError("the replay left the recorded output")
    return HostWork(done.stats.verify_passes, len(done.token_ids), wall - ctx.spent)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.lab.hostwork", description=__doc__.splitlines()[0])
    ap.add_argument("outputs", help="a recording of engine.lab.replay record")
    ap.add_argument("--mode", default="greedy", choices=("greedy", "sampled"))
    ap.add_argument("--reps", type=int, default=3, help="replays of each output; the median is reported")
    ap.add_argument("--kind", default="", help="only workloads of this kind (edit, new)")
    args = ap.parse_args(argv)
    data = json.loads(Path(args.outputs).read_text(encoding="utf-8"))
    curve = {int(k): float(v) for k, v in data["verify_curve"].items()}
    first = next(w for w in data["workloads"].values() if w["kind"] != "long")
    measure(first["prompt"], first["output"][:64], curve, auto=True, mode=args.mode)  # imports and caches warm
    print("| workload | tokens | plain us/token | auto us/token | auto passes | auto extra us/token |\n|---|---|---|---|---|---|")
    for name, wl in data["workloads"].items():
        if wl["kind"] == "long" or (args.kind and not wl["kind"].startswith(args.kind)):
            continue
        res = {}
        for auto in (False, True):
            runs = [measure(wl["prompt"], wl["output"], curve, auto=auto, mode=args.mode) for _ in range(args.reps)]
            res[auto] = (statistics.median(r.us_per_token for r in runs), runs[0])
        plain, auto_ = res[False][0], res[True][0]
        print(f"| {name} | {res[True][1].tokens} | {plain:.1f} | {auto_:.1f} | {res[True][1].passes} | {auto_ - plain:+.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
