"""This request's lookup drafts against what the long-lived estimates expected of them.

The acceptance estimates are pooled over every request the engine has served, and a
long-running server mixes workloads: whole-file edits teach the n-gram overlay's long matches
to accept almost always, and the next request writes new code where the same matches break at
once. On a GPU a failed verify pass costs about four plain steps, so a few such passes put a
whole request below plain decoding; and the edit after that new code meets estimates the new
code taught to distrust the very matches it now copies along. The calibration compares, within
the request, the tokens lookup drafts had accepted with the tokens the estimates expected of
them (verified passes and the free shadow checks alike) and scales the estimates by that ratio:
down after a pass or two that broke, up after a copy the estimates did not believe in.
"""

from __future__ import annotations

from dataclasses import dataclass

# Expected accepted tokens the pooled estimates count for before this request says otherwise:
# one failed pass expecting 3 tokens takes them to 4/7 of themselves.
PRIOR_TOKENS = 4.0
MAX_FACTOR = 4.0  # a copy can lift distrusted estimates this far...
MAX_RATE = 0.99  # ...but never to certainty


@dataclass
class RequestCalibration:
    accepted: float = 0.0
    expected: float = 0.0

    def record(self, expected: float, accepted: int) -> None:
        self.expected += expected
        self.accepted += accepted

    @property
    def factor(self) -> float:
        """What to scale the estimates by: (accepted + prior) / (expected + prior), at most MAX_FACTOR."""
        return min(MAX_FACTOR, (self.accepted + PRIOR_TOKENS) / (self.expected + PRIOR_TOKENS))

    def scaled(self, rates: list[float]) -> list[float]:
        """``rates`` times the factor, none above MAX_RATE (a new list: the caller's is a shared cache)."""
        f = self.factor
        if f == 1.0:
            return rates
        if f < 1.0:
            return [r * f for r in rates]
        return [max(r, min(MAX_RATE, r * f)) for r in rates]
