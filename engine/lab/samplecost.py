"""What the sampler costs a token, beside the step it follows, on real rows.

    python -m engine.lab.samplecost [--suites heldout42,heldout44] [--tokens 120]

A plain decode of each workload's first turn on tau's backend context (the calibrated CPU layout's
weights, 2 threads), greedy and sampled (T 0.6, top-p 0.95), with ``Sampler.sample`` (the argmax, or
the distribution and its draw) timed apart from ``Context.decode``: whether tau's plain decode
could trail llama-server's by its host-side sampling on some workloads and not others.
"""

from __future__ import annotations

import argparse
import statistics
import time

from engine.backend import Context, Model
from engine.chat_template import render_jinja
from engine.lab.bench import GREEDY
from engine.lab.benchdata.workloads import SUITES
from engine.modelpack import default_target_path
from engine.sampling import Sampler
from engine.types import SamplingParams


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.lab.samplecost", description=__doc__.splitlines()[0])
    ap.add_argument("--suites", default="heldout42,heldout44")
    ap.add_argument("--tokens", type=int, default=120)
    ap.add_argument("--repacked", action=argparse.BooleanOptionalAction, default=True)
    args = ap.parse_args(argv)
    model = Model(str(default_target_path()), gpu_layers=0, extra_buffers=args.repacked)
    ctx = Context(model, n_ctx=4096, threads=2, flash_attn=False)
    template = model.chat_template() or ""
    print("| workload | mode | sampler median (us) | sampler p90 (us) | step median (ms) |\n|---|---|---|---|---|")
    for suite in args.suites.split(","):
        for wl in SUITES[suite]:
            prompt = render_jinja(template, list(wl.turns[0]), None, True)  # the model's own template
            toks = model.tokenize(prompt, add_special=False, parse_special=True)
            for params in (SamplingParams(temperature=0.6, top_p=0.95, seed=1), GREEDY):
                ctx.clear()
                rows = ctx.decode(toks, 0, all_logits=False)
                sampler, hist, pos = Sampler(params), list(toks), len(toks)
                sample_s: list[float] = []
                step_s: list[float] = []
                for _ in range(args.tokens):
                    assert rows is not None
                    t0 = time.perf_counter()
                    tok = sampler.sample(rows[-1], hist)  # what the plain loop calls: argmax, or p and its draw
                    t1 = time.perf_counter()
                    hist.append(tok)
                    rows = ctx.decode([tok], pos, all_logits=False)
                    pos += 1
                    step_s.append(time.perf_counter() - t1)
                    sample_s.append(t1 - t0)
                p90 = sorted(sample_s)[int(0.9 * len(sample_s))]
                print(f"| {wl.name} | {'greedy' if params.greedy else 'sampled'} | {statistics.median(sample_s) * 1e6:.0f} "
                      f"| {p90 * 1e6:.0f} | {statistics.median(step_s) * 1e3:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
