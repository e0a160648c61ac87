"""Wide verify passes computed on the weights in their other CPU layout.

On some CPUs llama.cpp's repacked weight layout steps faster but costs more per row once a
pass is wide (``engine.lab`` MEASUREMENTS: on a 2-core EPYC a 64-row pass took 860 ms
repacked and 686 ms plain, a single step 39 and 43 ms). Edits verify long windows along a
copy of the file and step one row at a time where the output departs from it, so the
sequence moves: a wide pass runs on the side context (the same GGUF loaded in the other
layout, ``engine.sideprefill``) when its saving pays for copying the KV state there and back,
and the next narrow pass brings it home. Each context computes exact rows of the same model;
only the kernels differ, as between any two batch shapes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.costs import time_pass, warm_up
from engine.policy import MAX_WINDOW, CostCurve

SIDE_POINTS = (16, 24, 32, 41, 48, 64)  # the side only takes wide passes: its curve there
MARGIN = 1.5  # the modelled saving must beat the two copies by this factor (CPU timings wander)
# a width moves only where the side is this much cheaper: a shared 2-core host measured the
# same 64-row ratio at 0.83, 0.87 and 1.02 on one day, and a wrong "cheaper" costs every edit
MIN_SAVING = 0.10
RATIO_METHOD = 2  # how the ratios are measured; saved ratios of another method are measured again
STINT_TOKENS = 512  # the copies a stint of wide passes pays, spread over its passes, as seen by the window choice


@dataclass(frozen=True)
class SideVerify:
    """Seconds by rows (index n, up to MAX_WINDOW + 1) on both layouts, as measured at load, and
    one KV state copy per token of the sequence."""

    main: tuple[float, ...]
    side: tuple[float, ...]
    copy_s: float
    min_rows: int  # the side's narrowest measured pass: it takes no narrower one

    @classmethod
    def of(cls, main: dict[int, float], ratios: dict[int, float], copy_s: float) -> SideVerify:
        """From the decode context's curve and the side's cost ratios at some widths (linear
        between them, flat beyond); the side takes no pass narrower than its narrowest ratio."""
        m = CostCurve(main)
        ratios = {n: (r if r <= 1.0 - MIN_SAVING else max(r, 1.0)) for n, r in ratios.items()}
        xs = sorted(ratios)

        def ratio(n: int) -> float:
            if n <= xs[0] or n >= xs[-1]:
                return ratios[xs[0] if n <= xs[0] else xs[-1]]
            hi = next(x for x in xs if x >= n)
            lo = max(x for x in xs if x < n)
            f = (n - lo) / (hi - lo)
            return ratios[lo] * (1 - f) + ratios[hi] * f

        top = MAX_WINDOW + 2
        main_s = tuple(m.cost(n) if n else 0.0 for n in range(top))
        return cls(main_s, tuple(c * ratio(n) for n, c in enumerate(main_s)), copy_s, xs[0])

    def go(self, n: int, total: int) -> bool:
        """A pass of ``n`` rows after ``total`` tokens of sequence: worth moving to the side?"""
        if n < self.min_rows or n >= len(self.main):
            return False
        return self.main[n] - self.side[n] > MARGIN * 2 * (total + n) * self.copy_s

    def stay(self, n: int) -> bool:
        """On the side already: is an ``n``-row pass no dearer there?"""
        return self.min_rows <= n < len(self.main) and self.side[n] <= self.main[n]

    def effective(self, points: dict[int, float]) -> dict[int, float]:
        """The curve the window choice sees: the main curve's points, and the side's where a
        wide pass is cheaper there, charged a share of the copies its stint pays."""
        out = dict(points)
        for n in range(self.min_rows, len(self.main)):
            side = self.side[n] + STINT_TOKENS * self.copy_s
            if side < self.main[n] and (n in points or n in SIDE_POINTS):
                out[n] = side
        return out


def measure_ratios(
    main_ctx,
    side_ctx,
    n_vocab: int,
    points: tuple[int, ...] = SIDE_POINTS,
    repeats: int = 5,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[int, float]:
    """What an n-row pass (logits on every row) costs on the side over the decode context: the
    median over rounds of the two timed back to back after the same warm context. Measured
    apart, a shared host's drift between the two was larger than the difference between the
    layouts; a ratio of each side's fastest time let one lucky sample decide."""
    rng = np.random.default_rng(0)
    lo, hi, n_warm = warm_up((main_ctx, side_ctx), n_vocab, max(points), rng)
    seen: dict[int, list[float]] = {n: [] for n in points}
    for r in range(repeats + 1):  # the first round pays first-use costs and is not kept
        for n in points:
            toks = [int(t) for t in rng.integers(lo, hi, n)]
            dt = [0.0, 0.0]
            for c in (0, 1) if (r + n) % 2 else (1, 0):
                dt[c] = time_pass(side_ctx if c else main_ctx, toks, n_warm, clock)
            if r and dt[0] > 0:
                seen[n].append(dt[1] / dt[0])
    for c in (main_ctx, side_ctx):
        c.truncate(0)
    return {n: float(np.median(v)) for n, v in seen.items()}


def side_ratios(profile: dict, main_layout: str, version: int) -> dict[int, float] | None:
    """The side's wide-pass cost ratios saved in a machine profile, if measured for this layout and version."""
    saved = profile.get("side_verify")
    if (
        not isinstance(saved, dict)
        or saved.get("main_layout") != main_layout
        or saved.get("version") != version
        or saved.get("method") != RATIO_METHOD
    ):
        return None
    r = saved.get("ratios")
    if not isinstance(r, dict) or not r:
        return None
    return {int(k): float(v) for k, v in r.items()}


def wide_passes(
    want: bool | None,
    profile: dict,
    main_ctx,
    side_ctx,
    main_layout: str,
    version: int,
    n_vocab: int,
    copy_s: float,
) -> tuple[SideVerify | None, bool]:
    """The rule for moving wide passes to the side context (None: off, no side context, or no
    width is cheaper there), measuring the side's ratios once into ``profile``; (rule, profile changed)."""
    if side_ctx is None or want is False or copy_s <= 0:
        return None, False
    dirty = False
    ratios = side_ratios(profile, main_layout, version)
    if ratios is None:
        ratios = measure_ratios(main_ctx, side_ctx, n_vocab)
        profile["side_verify"] = {
            "main_layout": main_layout,
            "version": version,
            "method": RATIO_METHOD,
            "ratios": {str(k): v for k, v in ratios.items()},
        }
        dirty = True
    main = {int(k): float(v) for k, v in profile["verify_curve"].items()}
    rule = SideVerify.of(main, ratios, copy_s)
    cheaper = any(rule.go(n, 0) for n in range(rule.min_rows, len(rule.main)))
    return (rule if cheaper or want else None), dirty
