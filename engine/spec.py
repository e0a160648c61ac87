"""Speculation settings of one generation (which drafters, in which order, how windows are sized)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SpecConfig:
    drafters: tuple[str, ...] = ("mtp", "ngram", "draft")  # priority order; missing ones are skipped
    adaptive: bool = True  # choose each window by expected tokens/s; False = always fixed_window
    fixed_window: int = 8  # window when not adaptive (capped by the draft's length)
    max_window: int = 16
    stochastic_draft: bool = True  # sampled mode: draft model samples from q (min(1,p/q) rule)


def spec_preset(mode: str, max_window: int = 16) -> SpecConfig:
    """The presets behind ``--spec off|ngram|draft|mtp|auto``."""
    if mode == "off":
        return SpecConfig(drafters=(), max_window=max_window)
    if mode in ("ngram", "draft", "mtp"):
        return SpecConfig(drafters=(mode,), max_window=max_window)
    if mode == "auto":
        return SpecConfig(max_window=max_window)
    raise ValueError(f"unknown speculation mode {mode!r} (off|ngram|draft|mtp|auto)")
