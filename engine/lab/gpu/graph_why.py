"""Why a step or pass runs without its CUDA graph: the decode loop's shapes in a row, each timed.

    GGML_CUDA_GRAPH_WHY=1 python -m engine.lab.gpu.graph_why TARGET.gguf [--ctx 1024] [--cycles 6]

Runs what tau's loop does on a GPU (one-row steps with their logits, then a verify pass of 16 or
64 rows whose rejected rows are dropped) and prints one ``event`` line per call on stderr, in order
with the lines a build with ``graphwhy.patch`` prints there (``graphuse``: replayed or not,
``graphwhy``: the node and field whose change stopped the replay). Ends with a JSON summary on
stdout: median ms by kind (step, step right after a pass, pass by width).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from engine import backend  # llama_cpp before numpy


def run(path: str, n_ctx: int, cycles: int) -> dict:
    model = backend.Model(path)
    kept = 4 + cycles * (5 + 2 + 4)  # tokens the run keeps: steps, and each cycle's pass and steps
    ctx = backend.Context(model, n_ctx=n_ctx + kept + 64, n_batch=512)  # room for the widest pass at the end
    prompt = [(i * 7919) % 20000 + 100 for i in range(n_ctx)]
    ctx.decode(prompt, 0, all_logits=False)
    pos = len(prompt)
    times: dict[str, list[float]] = {}

    def call(kind: str, n: int, keep: int) -> None:
        nonlocal pos
        toks = [(pos + i) % 20000 + 100 for i in range(n)]
        print(f"event {kind} rows={n} pos={pos}", file=sys.stderr, flush=True)
        t = time.perf_counter()
        rows = ctx.decode(toks, pos, all_logits=True)
        assert rows is not None
        int(rows[-1].argmax())
        dt = (time.perf_counter() - t) * 1e3
        ctx.truncate(pos + keep)
        pos += keep
        times.setdefault(kind, []).append(dt)
        print(f"event-done {kind} {dt:.2f} ms", file=sys.stderr, flush=True)

    for _ in range(4):
        call("step", 1, 1)
    for c in range(cycles):
        width = 16 if c % 2 == 0 else 64
        call(f"pass{width}", width, 5)
        call("step-after-1", 1, 1)
        call("step-after-2", 1, 1)
        for _ in range(4):
            call("step", 1, 1)
    ctx.close()
    model.close()
    return {k: round(statistics.median(v), 3) for k, v in times.items()}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--ctx", type=int, default=1024)
    ap.add_argument("--cycles", type=int, default=6)
    a = ap.parse_args(argv)
    print(json.dumps(run(a.model, a.ctx, a.cycles)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
