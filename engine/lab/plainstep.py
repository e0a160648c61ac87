"""tau's raw single-token step beside llama-bench's, alternated in one run.

    python -m engine.lab.plainstep --llama-bench PATH [--depth 600] [--tokens 64] [--rounds 3]
        [--layout repacked|plain] [--threads 2] [--n-ctx 8192] [--poll N] [--json]

Plain decoding is capped by the step llama.cpp takes for one token, so tau's plain figure beside
llama-server's is first a question of whether tau's context takes the same step. Each round times
``--tokens`` one-token decodes on tau's ``engine.backend.Context`` after ``--depth`` tokens of context
(the argmax read from each row, as the loop does), then runs ``llama-bench -p 0 -n TOKENS -d DEPTH``
on the same model, threads and weight layout; the order alternates so the machine's drift falls on
both alike. ``--n-ctx`` sets tau's context size (llama-bench's is depth + tokens); ``--poll N`` attaches
a persistent threadpool polling at N to tau's context (engine.threadpool_backend), as llama-bench does.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from statistics import median

import numpy as np

from engine.backend import Context, Model


def tau_step_s(ctx: Context, depth: int, tokens: int) -> float:
    """Median seconds of one-token steps after ``depth`` tokens (the context is cleared first)."""
    ctx.clear()
    seed = [(17 * i + 11) % 30000 + 100 for i in range(depth)]  # any ids: the cost does not read them
    ctx.decode(seed, 0, all_logits=False)
    tok, times = seed[-1], []
    for i in range(tokens):
        t0 = time.perf_counter()
        rows = ctx.decode([tok], depth + i, all_logits=False)
        assert rows is not None
        tok = int(np.argmax(rows[-1]))
        times.append(time.perf_counter() - t0)
    return median(times)


def bench_step_s(binary: str, model: str, depth: int, tokens: int, threads: int, repack: bool) -> float:
    """Seconds a token by llama-bench's own timing (its mean tokens/s over one repetition)."""
    cmd = [binary, "-m", model, "-p", "0", "-n", str(tokens), "-d", str(depth), "-t", str(threads),
           "-r", "1", "--repack", "1" if repack else "0", "-o", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return 1.0 / float(json.loads(out)[0]["avg_ts"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.lab.plainstep", description=__doc__.splitlines()[0])
    ap.add_argument("--llama-bench", required=True, help="the peer's llama-bench binary")
    ap.add_argument("--model", default="", help="a GGUF (default: tau's default target)")
    ap.add_argument("--depth", type=int, default=600)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--layout", choices=("repacked", "plain"), default="repacked")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=8192)
    ap.add_argument("--poll", type=int, default=-1, help="attach a persistent threadpool polling at N (0-100)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.model:
        path = args.model
    else:
        from engine.modelpack import default_target_path

        path = str(default_target_path())
    repack = args.layout == "repacked"
    model = Model(path, gpu_layers=0, extra_buffers=repack)
    ctx = Context(model, n_ctx=args.n_ctx, threads=args.threads, flash_attn=False)
    pool = None
    if args.poll >= 0:
        from engine.threadpool_backend import Threadpool

        pool = Threadpool(ctx.ptr, args.threads, args.poll)
    rows = []
    try:
        for r in range(args.rounds):
            order = ("tau", "bench") if r % 2 == 0 else ("bench", "tau")
            got: dict[str, float] = {}
            for who in order:
                got[who] = (tau_step_s(ctx, args.depth, args.tokens) if who == "tau" else
                            bench_step_s(args.llama_bench, path, args.depth, args.tokens, args.threads, repack))
            rows.append({"round": r + 1, "tau_ms": got["tau"] * 1e3, "bench_ms": got["bench"] * 1e3,
                         "tau_over_bench_tok_s": got["bench"] / got["tau"]})
    finally:
        if pool is not None:
            pool.close()
        ctx.close()
        model.close()
    if args.json:
        json.dump({"args": vars(args), "rounds": rows}, sys.stdout, indent=2)
        print()
        return 0
    print(f"{args.layout} layout, {args.threads} threads, depth {args.depth}, {args.tokens} tokens, tau n_ctx "
          f"{args.n_ctx}, tau's threadpool {'poll ' + str(args.poll) if pool else 'disposable'}")
    for x in rows:
        print(f"round {x['round']}: tau {x['tau_ms']:.2f} ms/step, llama-bench {x['bench_ms']:.2f} ms/step, "
              f"tau tok/s / llama-bench {x['tau_over_bench_tok_s']:.3f}x")
    print(f"median tau / llama-bench: {median(x['tau_over_bench_tok_s'] for x in rows):.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
