"""What a pass costs by its number of rows, alone and interleaved with one-row steps.

    python -m engine.lab.gpu.pass_shapes TARGET.gguf [--ctx 1024] [--reps 30]

CUDA graphs replay a pass only while the graph's shapes stay the same; a verify pass between
one-row steps changes them twice. ``steady`` repeats one width, ``after-step`` is a width run
right after a one-row step, and ``step-after`` the one-row step right after it; ``last-row``
repeats one width with logits on its last row only (what the logits of every row cost);
``varying`` runs consecutive passes of changing widths (a copy verified window after window),
unpadded and padded to 16 rows. Prints JSON (milliseconds).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from engine import backend  # llama_cpp before numpy
from engine.widths import fixed_widths

VARYING = (5, 9, 13, 7, 11, 15, 3, 16, 10)


def _timed(ctx, toks: list[int], pos: int, all_logits: bool = True) -> float:
    t = time.perf_counter()
    rows = ctx.decode(toks, pos, all_logits=all_logits)
    assert rows is not None
    int(rows[-1].argmax())  # the logits read back, as a verify pass reads them
    dt = time.perf_counter() - t
    ctx.truncate(pos)
    return dt


def measure(path: str, n_ctx: int, reps: int, widths: list[int]) -> dict:
    model = backend.Model(path)
    ctx = backend.Context(model, n_ctx=n_ctx + 128, n_batch=512)  # room for the widest pass after the prompt
    prompt = [(i * 7919) % 20000 + 100 for i in range(n_ctx)]
    ctx.decode(prompt, 0, all_logits=False)
    pos = len(prompt)
    out: dict[str, dict[int, float]] = {"steady": {}, "after-step": {}, "step-after": {}, "last-row": {}, "varying": {}}
    for n in widths:
        toks = [(pos + i) % 20000 + 100 for i in range(n)]
        xs = [_timed(ctx, toks, pos) for _ in range(reps + 5)][5:]
        out["steady"][n] = statistics.median(xs) * 1e3
        a, b = [], []
        for _ in range(reps):
            _timed(ctx, toks[:1], pos)
            a.append(_timed(ctx, toks, pos))
            b.append(_timed(ctx, toks[:1], pos))
        out["after-step"][n] = statistics.median(a) * 1e3
        out["step-after"][n] = statistics.median(b) * 1e3
        xs = [_timed(ctx, toks, pos, all_logits=False) for _ in range(reps + 5)][5:]
        out["last-row"][n] = statistics.median(xs) * 1e3
    for pad in (0, 16):
        ctx.pad_table = fixed_widths((pad,) if pad else ())
        xs = [_timed(ctx, [(pos + i) % 20000 + 100 for i in range(w)], pos) for _ in range(reps // 3 + 2) for w in VARYING]
        out["varying"][pad] = statistics.median(xs[len(VARYING):]) * 1e3
    ctx.pad_table = ()
    ctx.close()
    model.close()
    return {k: {w: round(v, 3) for w, v in d.items()} for k, d in out.items()}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--ctx", type=int, default=1024, help="tokens in the cache before the passes")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--widths", default="1,2,3,4,6,8,12,16,24,32,48,64")
    a = ap.parse_args(argv)
    res = measure(a.model, a.ctx, a.reps, [int(w) for w in a.widths.split(",")])
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
