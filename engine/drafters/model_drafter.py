"""What model-based drafters (draft model, MTP heads) share: the request's sampling and
their measured costs, which the window policy weighs: seconds per drafted token, and
seconds per token of history taken in when catching up after sitting out.

Both are recent averages (old proposals' weight decays), not lifetime ones: a drafter that
was cheap at a short context or on another request must not look cheap now.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.sampling import Sampler
from engine.types import SamplingParams

COST_DECAY = 0.9  # weight of a proposal's cost after each further proposal


class RecentRate:
    """Seconds per token over recent events, each older event weighing COST_DECAY less."""

    def __init__(self) -> None:
        self._s = 0.0
        self._n = 0.0

    def add(self, seconds: float, tokens: int) -> None:
        if tokens <= 0:
            return
        self._s = self._s * COST_DECAY + seconds
        self._n = self._n * COST_DECAY + tokens

    @property
    def value(self) -> float:
        return self._s / self._n if self._n else 0.0


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the common prefix of two token lists (slice compares run in C)."""
    n = min(len(a), len(b))
    if list(a[:n]) == list(b[:n]):
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if list(a[lo:mid]) == list(b[lo:mid]):
            lo = mid
        else:
            hi = mid
    return lo


class ModelDrafterBase:
    def __init__(self) -> None:
        self.sampling: SamplingParams = SamplingParams()
        self.sampler = Sampler(self.sampling)
        self.seconds = 0.0  # lifetime time spent drafting (not catching up with the history)
        self.tokens = 0
        self.catch_up_seconds = 0.0  # lifetime time spent catching up
        self.caught_up = 0
        self._draft_rate = RecentRate()
        self._catch_rate = RecentRate()

    def charge(self, draft_s: float, drafted: int, catch_s: float = 0.0, caught: int = 0) -> None:
        """Account one proposal: its drafting time and any catch-up it needed first."""
        self.seconds += draft_s
        self.tokens += drafted
        self._draft_rate.add(draft_s, drafted)
        self.catch_up_seconds += catch_s
        self.caught_up += caught
        self._catch_rate.add(catch_s, caught)

    @property
    def cost_per_token(self) -> float:
        return self._draft_rate.value

    @property
    def catch_up_s_per_token(self) -> float:
        """Recent seconds per history token taken in by a catch-up (0 = none measured yet)."""
        return self._catch_rate.value

    def lag(self, history: Sequence[int]) -> int:
        """History tokens the drafter would take in before its next draft (none by default:
        MTP heads follow the target's own context)."""
        return 0

    def set_sampling(self, params: SamplingParams, rng: np.random.Generator | None = None) -> None:
        """Draft with the request's filters (stochastic drafts need the same q as p's pipeline)."""
        self.sampling = params
        self.sampler = Sampler(params, rng)
