"""What the engine times once per model and machine: the verify-cost curve, a drafter's cost
per token, and the memory bandwidth a decode streams its weights at."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from engine.policy import FOLLOWING_STEPS

CURVE_POINTS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 16, 17, 20, 24, 28, 32, 36, 41, 48, 64)  # CPU kernels make the curve jagged
# The curve is measured after this many tokens of context: on CPU a wide pass's attention
# grows with the context, so a near-empty context would make long windows look cheaper.
WARM_TOKENS = 512


def warm_up(ctxs, vocab_size: int, widest: int, rng: np.random.Generator) -> tuple[int, int, int]:
    """Clear each context and fill it with the same random context, leaving room for a pass of
    ``widest`` rows; returns the token range drawn from (lo, hi) and the context's length."""
    hi = min(vocab_size, 30000)
    lo = min(100, hi // 2)
    n_warm = max(1, min(WARM_TOKENS, min(int(c.n_ctx) for c in ctxs) - widest - 1))
    warm = [int(t) for t in rng.integers(lo, hi, n_warm)]
    for c in ctxs:
        c.truncate(0)
        c.decode(warm, 0, all_logits=False)
    return lo, hi, n_warm


def time_pass(ctx, toks: list[int], pos: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds one pass of ``toks`` (logits on every row) takes at ``pos``; the cache is cut back to ``pos``."""
    t0 = clock()
    ctx.decode(toks, pos, all_logits=True)
    dt = clock() - t0
    ctx.truncate(pos)
    return dt


def verify_curve(ctx, vocab_size: int, points: tuple[int, ...] = CURVE_POINTS, repeats: int = 3,
                 clock: Callable[[], float] = time.perf_counter) -> dict[int, float]:
    """Seconds an n-row pass (logits on every row) adds to a stream of single-row steps, after
    a warm context: what a plain step costs and what a verify pass costs in place of one.

    n = 1 is the steady single-row step, timed among consecutive ones. Every other point is
    its pass plus whatever it makes the FOLLOWING_STEPS single-row steps after it pay beyond
    the steady one: on a CUDA build llama.cpp replays a captured graph for repeated
    single-token steps, and after a pass of another size the first step runs without it and
    the second captures it again (timed apart, windows looked cheaper against a plain step
    than they were: see engine/lab/gpu/README.md). Rounds over
    all points are interleaved and each point keeps its fastest time, so a burst of
    interference hits one sample of a point, not all of them. ``ctx`` is an
    engine.backend.Context; its KV cache is cleared before and after.
    """
    rng = np.random.default_rng(0)
    lo, hi, n_warm = warm_up((ctx,), vocab_size, max(points), rng)

    def timed(toks: list[int]) -> float:
        return time_pass(ctx, toks, n_warm, clock)

    def one() -> list[int]:
        return [int(rng.integers(lo, hi))]

    for _ in range(4):  # first-use costs (buffers, page-ins, a graph capture)
        timed(one())
    single = min(timed(one()) for _ in range(8))
    out: dict[int, float] = {n: float("inf") for n in points if n != 1}
    for _ in range(repeats):
        for n in out:
            dn = timed([int(t) for t in rng.integers(lo, hi, n)])
            after = sum(max(0.0, timed(one()) - single) for _ in range(FOLLOWING_STEPS))
            out[n] = min(out[n], dn + after)
        single = min(single, timed(one()), timed(one()))
    ctx.truncate(0)
    return {1: single, **out} if 1 in points else out


def token_cost(ctx, vocab_size: int, n: int = 6) -> float:
    """Seconds for one single-token decode step (e.g. of the draft model)."""
    ctx.truncate(0)
    ctx.decode([(100 + i) % vocab_size for i in range(16)], 0, all_logits=False)
    t0 = time.perf_counter()
    for i in range(n):
        ctx.decode([(200 + i) % vocab_size], 16 + i, all_logits=False)
    dt = (time.perf_counter() - t0) / n
    ctx.truncate(0)
    return dt


def stream_bandwidth_gbs(mb: int = 512, threads: int = 0, repeats: int = 3) -> float:
    """Host read bandwidth with every thread streaming its own slice, as a decode streams its
    weights (a one-thread copy measured half of what a 2-core decode reached)."""
    threads = threads or (os.cpu_count() or 1)
    n = mb * (1 << 20) // 8
    data = np.ones(n, dtype=np.float64)
    parts = np.array_split(data, threads)
    with ThreadPoolExecutor(threads) as pool:  # numpy releases the GIL inside a reduction
        list(pool.map(np.sum, parts))
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            list(pool.map(np.sum, parts))
            best = min(best, time.perf_counter() - t0)
    return data.nbytes / best / 1e9


def honest_bandwidth(streamed_gbs: float, bytes_per_token: float, decode_tok_s: float) -> float:
    """The ceiling's bandwidth: the streamed figure, raised to what a measured plain decode
    already moved (a decode faster than its ceiling would mean the ceiling is wrong)."""
    # a hair above the decode: the ceiling recomputed from this figure (and from its JSON copy at
    # the next load) must not round one ulp below the decode it was raised to
    return max(streamed_gbs, bytes_per_token * decode_tok_s / 1e9 * (1 + 1e-9))
