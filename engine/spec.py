"""Speculation settings of one generation (which drafters, in which order, how windows are sized)."""

from __future__ import annotations

from dataclasses import dataclass

# Drafted tokens per pass at most. On a GPU a wide pass costs little more than one row, so
# long copy runs pay for long windows. On the 2-core CPU without AMX of sessions 1-3 rows cost
# ~40 ms each from 7 to 41 per pass (one row ~100 ms); on the 2-core AMX VM of session 4, 16
# rows cost ~4x one row and 32 ~5.5x, and limits of 24, 32 and 48 were within the bench's
# noise of each other on the edits (`tau bench --configs ngram-w32,ngram-w48`), while the
# acceptance estimate still stopped every window at the first position a copy had broken at.
# Replayed in virtual time (engine.lab.simulate) on edits, 40 beat 24 under the 2-core CPU's
# curve (+13%), the H200's for the 1.5B (+18%) and a flat GPU curve (+6%), new code equal;
# The curve now reaches 64 rows, and wide passes on the other CPU layout (engine.sideverify)
# made them cheap per row; once the request calibration shrank failure rates instead of the
# rates themselves, 63 beat 40 in the replay on edits under the EPYC's curve with the side
# (+16%) and the H200's (+8%), new code equal (engine/lab/MEASUREMENTS.md). `tau tune` also tries 8-24.
DEFAULT_MAX_WINDOW = 63


@dataclass(frozen=True)
class SpecConfig:
    drafters: tuple[str, ...] = ("mtp", "ngram", "draft")  # priority order; missing ones are skipped
    adaptive: bool = True  # choose each window by expected tokens/s; False = always fixed_window
    fixed_window: int = 8  # window when not adaptive (capped by the draft's length)
    max_window: int = DEFAULT_MAX_WINDOW
    stochastic_draft: bool = True  # sampled mode: draft model samples from q (min(1,p/q) rule)


def spec_preset(mode: str, max_window: int = DEFAULT_MAX_WINDOW) -> SpecConfig:
    """The presets behind ``--spec off|ngram|draft|mtp|auto``."""
    if mode == "off":
        return SpecConfig(drafters=(), max_window=max_window)
    if mode in ("ngram", "draft", "mtp"):
        return SpecConfig(drafters=(mode,), max_window=max_window)
    if mode == "auto":
        return SpecConfig(max_window=max_window)
    raise ValueError(f"unknown speculation mode {mode!r} (off|ngram|draft|mtp|auto)")
