"""Settings ``tau tune`` measured and saved in the profile (``"tuned"``), as the engine reads them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from engine.config import EngineConfig
from engine.spec import SpecConfig


@dataclass(frozen=True)
class Setting:
    max_window: int
    ngram_key: int
    threads: int
    draft: bool

    def label(self) -> str:
        return f"window {self.max_window}, key {self.ngram_key}, {self.threads} threads, draft {'on' if self.draft else 'off'}"

    def to_profile(self) -> dict[str, Any]:
        return {
            "max_window": self.max_window,
            "ngram_key": self.ngram_key,
            "threads": self.threads,
            "draft": self.draft,
        }


def tuned_settings(profile: dict[str, Any]) -> Setting | None:
    """The ``"tuned"`` section of a profile, validated (None when absent or malformed)."""
    t = profile.get("tuned")
    if not isinstance(t, dict):
        return None
    try:
        s = Setting(int(t["max_window"]), int(t["ngram_key"]), int(t["threads"]), bool(t["draft"]))
    except (KeyError, TypeError, ValueError):
        return None
    if not (1 <= s.max_window <= 64 and 1 <= s.ngram_key <= 16 and s.threads >= 1):
        return None
    return s


def apply_tuned(cfg: EngineConfig, tuned: Setting | None) -> EngineConfig:
    """cfg with the tuned values filled in where the user left the default (0); explicit settings win."""
    if tuned is None:
        return cfg
    return replace(
        cfg,
        max_window=cfg.max_window or tuned.max_window,
        ngram_key=cfg.ngram_key or tuned.ngram_key,
        threads=cfg.threads or tuned.threads,
    )


def tuned_spec(spec: SpecConfig, tuned: Setting | None, mode: str = "auto") -> SpecConfig:
    """Drop the draft model from the ``auto`` preset when tuning found it slower."""
    if tuned is None or tuned.draft or mode != "auto" or "draft" not in spec.drafters:
        return spec
    return replace(spec, drafters=tuple(d for d in spec.drafters if d != "draft"))
