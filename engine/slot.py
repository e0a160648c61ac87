"""A drafter as the speculator holds it: whether drafting is free, what a drafted token costs, how
long a shelved one stays quiet, and the throughput guard that judges a costly one by its passes."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.drafters.base import Drafter

GUARD_DECAY = 0.95  # weight of a pass in the throughput guard after each further pass
GUARD_MIN_TOKENS = 8.0  # emitted tokens (decayed) before the guard judges a drafter


@dataclass
class Guard:
    """A costly drafter's measured throughput against plain decoding, over its recent passes:
    seconds spent (drafting, catch-up and the verify pass) in plain steps, and tokens emitted.
    The window choice rests on estimates; this is what the passes actually delivered."""

    steps: float = 0.0
    tokens: float = 0.0

    def record(self, seconds: float, tokens: int, step_s: float) -> None:
        self.steps = self.steps * GUARD_DECAY + seconds / step_s
        self.tokens = self.tokens * GUARD_DECAY + tokens

    @property
    def losing(self) -> bool:
        """Its passes emitted fewer tokens than plain steps would have in the same time."""
        return self.tokens >= GUARD_MIN_TOKENS and self.steps > self.tokens


@dataclass
class DrafterSlot:
    drafter: Drafter
    lookup: bool = True  # drafting is free (n-gram): propose first, then size the window
    initial_cost: float = 0.0  # seconds per drafted token before any were measured
    shelved_passes: int = 0
    quiet: dict[str, int] = field(default_factory=dict)  # by mode: passes before a shelved one is asked again
    drafted: int = 0
    accepted: int = 0
    guards: dict[str, Guard] = field(default_factory=dict)  # by sampling mode

    def cost(self) -> float:
        if self.lookup:
            return 0.0
        measured = getattr(self.drafter, "cost_per_token", 0.0)
        return measured or self.initial_cost

    def guard(self, mode: str) -> Guard:
        g = self.guards.get(mode)
        if g is None:
            g = self.guards[mode] = Guard()
        return g
