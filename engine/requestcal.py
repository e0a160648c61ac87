"""This request's lookup drafts against what the long-lived estimates expected of them.

The acceptance estimates are pooled over every request the engine has served, and a
long-running server mixes workloads: whole-file edits teach the n-gram overlay's long matches
to accept almost always, and the next request writes new code where the same matches break at
once. On a GPU a failed verify pass costs about four plain steps, so a few such passes put a
whole request below plain decoding. The calibration compares, within the request, the tokens
lookup drafts had accepted with the tokens the estimates expected of them (verified passes and
the free shadow checks alike) and shrinks the estimates by that ratio when they were optimistic.
It never raises them: raised on new code's odd short run at low expectations (even after a
32-token head start), the overlay drafted 5-15 times as much there and lost 7-12% to plain on
the H200 (engine/lab/gpu/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass

# Expected accepted tokens the pooled estimates count for before this request says otherwise:
# one failed pass expecting 3 tokens takes them to 4/7 of themselves.
PRIOR_TOKENS = 4.0


@dataclass
class RequestCalibration:
    accepted: float = 0.0
    expected: float = 0.0

    def record(self, expected: float, accepted: int) -> None:
        self.expected += expected
        self.accepted += accepted

    @property
    def factor(self) -> float:
        """What to scale the estimates by: (accepted + prior) / (expected + prior), at most 1."""
        return min(1.0, (self.accepted + PRIOR_TOKENS) / (self.expected + PRIOR_TOKENS))

    def scaled(self, rates: list[float]) -> list[float]:
        """``rates`` with each position's failure rate divided by the factor (a new list: the
        caller's is a shared cache). A window's expected tokens then shrink about in proportion to
        the factor; the rates themselves times the factor compounded over the window, so a single
        copy that broke at an edit 22 tokens into a 63-token window stopped every window after it."""
        f = self.factor
        return rates if f >= 1.0 else [max(0.0, 1.0 - (1.0 - r) / f) for r in rates]
