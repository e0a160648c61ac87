"""How many rows a verify pass evaluates: its draft's, or a fixed width's on a GPU.

A pass of n rows may evaluate w >= n rows instead: the padding's rows verify more of the
proposal, and their KV is dropped at once. On a GPU fixed widths keep every pass the shape of
the one before it, which llama.cpp needs to replay its captured CUDA graph. Not on a CPU: there
a pass costs by its rows, and padding up to a measured width that costs less than the narrower
pass (the repacked kernels take rows four at a time: 16 rows measure cheaper than 12-15) was
worth +0.001 on replayed edits (engine/lab/MEASUREMENTS.md, ninth round).
"""

from __future__ import annotations

GPU_PASS_WIDTHS = (16, 64)  # engine.lab.gpu.pass_shapes; figures in engine/lab/gpu/README.md


def fixed_widths(widths: tuple[int, ...]) -> tuple[int, ...]:
    """The rows table for passes padded up to the narrowest of ``widths`` that holds them:
    table[n] = rows an n-row pass evaluates (n itself past the table)."""
    ws = sorted(widths)
    return tuple(n if n <= 1 else next((w for w in ws if w >= n), n) for n in range(max(ws, default=0) + 1))


def rows_for(n: int, table: tuple[int, ...]) -> int:
    return table[n] if n < len(table) else n


def padded_curve(points: dict[int, float], table: tuple[int, ...]) -> dict[int, float]:
    """What each measured width costs once padded: the curve the window choice sees."""
    return {n: points.get(rows_for(n, table), c) for n, c in points.items()}
