"""Measurements the engine makes once per model and machine, cached as a JSON profile:
the verify-cost curve, the draft model's cost per token, and memory bandwidth."""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

CURVE_POINTS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 16, 17, 20, 24, 28, 32, 36, 41)  # CPU kernels make the curve jagged
CURVE_VERSION = 6  # 6: n-row passes measured in a stream of single-row steps
# The curve is measured after this many tokens of context: on CPU a wide pass's attention
# grows with the context (on the 2-core CPU without AMX of sessions 1-3, 41 rows cost 14.6x
# one row at 48 tokens and 18.4x at 1000; the 2-core AMX VM of session 4 has a flatter curve,
# 41 rows at about 6.6x), so a near-empty context would make long windows look cheaper than
# they are in a real prompt.
WARM_TOKENS = 512


def machine_id(gpu: bool) -> str:
    cpu = platform.processor() or platform.machine()
    return f"{platform.node()}-{os.cpu_count()}cpu-{cpu}-{'gpu' if gpu else 'cpu'}".replace("/", "_").replace(" ", "_")


def profile_path(cache_dir: str, model_path: str, gpu: bool, threads: int) -> Path | None:
    if not cache_dir:
        return None
    p = Path(model_path)
    size = p.stat().st_size if p.exists() else 0
    name = f"{p.stem}-{size}-{machine_id(gpu)}-t{threads}.json"
    return Path(cache_dir) / "profiles" / name


def load_profile(path: Path | None) -> dict[str, Any]:
    if path is None or not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def save_profile(path: Path | None, data: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)


def verify_curve(ctx, vocab_size: int, points: tuple[int, ...] = CURVE_POINTS, repeats: int = 3,
                 clock: Callable[[], float] = time.perf_counter) -> dict[int, float]:
    """Seconds an n-row pass (logits on every row) adds to a stream of single-row steps, after
    a warm context: what a plain step costs and what a verify pass costs in place of one.

    n = 1 is the steady single-row step, timed among consecutive ones. Every other point is
    its pass plus whatever it makes the single-row step after it pay beyond the steady one:
    on a CUDA build llama.cpp replays a captured graph for repeated single-token steps, and
    a pass of another size costs the next step a re-capture (on the H200 the interleaved
    measurement of sessions 1-5 timed one row at 3.6 ms where decoding ran at 2.0 ms a token,
    so every window looked 1.8 times cheaper against a plain step than it was). Rounds over
    all points are interleaved and each point keeps its fastest time, so a burst of
    interference hits one sample of a point, not all of them. ``ctx`` is an
    engine.backend.Context; its KV cache is cleared before and after.
    """
    rng = np.random.default_rng(0)
    hi = min(vocab_size, 30000)
    lo = min(100, hi // 2)
    n_warm = max(1, min(WARM_TOKENS, int(ctx.n_ctx) - max(points) - 1))
    warm = [int(t) for t in rng.integers(lo, hi, n_warm)]
    ctx.truncate(0)
    ctx.decode(warm, 0, all_logits=False)

    def timed(toks: list[int]) -> float:
        t0 = clock()
        ctx.decode(toks, n_warm, all_logits=True)
        dt = clock() - t0
        ctx.truncate(n_warm)
        return dt

    def one() -> list[int]:
        return [int(rng.integers(lo, hi))]

    for _ in range(4):  # first-use costs (buffers, page-ins, a graph capture)
        timed(one())
    single = min(timed(one()) for _ in range(8))
    out: dict[int, float] = {n: float("inf") for n in points if n != 1}
    for _ in range(repeats):
        for n in out:
            dn = timed([int(t) for t in rng.integers(lo, hi, n)])
            after = timed(one())
            out[n] = min(out[n], dn + max(0.0, after - single))
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


def memory_bandwidth_gbs(mb: int = 256, repeats: int = 3) -> float:
    """Host memory bandwidth from a large copy (bytes read + written per second)."""
    n = mb * (1 << 20) // 8
    src = np.ones(n, dtype=np.float64)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return 2 * src.nbytes / best / 1e9
