"""A controlled-acceptance drafter: replays a known continuation, corrupted at set rates.

For benchmarks. Given the target's own greedy output for a prompt (the *reference*), it
proposes the reference's next tokens, each kept correct with the probability given for
its draft position (``rates[i]``; positions past the list use the last rate) and otherwise
replaced by a wrong token. With rates ``[1, 1, 1, 0]`` and a fixed window, every pass
accepts exactly 3 drafted tokens (tau = 4); with a constant rate a, tau follows
(1 - a^(K+1)) / (1 - a). Engine tokens/s can then be read against tau on any model,
random-weight ones included (whose greedy output is degenerate, which replay does not mind).

The drafter only drafts while the history is a prefix of the reference; elsewhere it
proposes nothing (a plain pass).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine.drafters.base import Draft


def rates_for_tau(tau: int, window: int) -> list[float]:
    """Per-position rates that give exactly ``tau`` tokens per pass at a fixed ``window``."""
    if tau < 1 or tau - 1 > window:
        raise ValueError(f"tau {tau} needs a window of at least {tau - 1}")
    return [1.0] * (tau - 1) + [0.0] * (window - tau + 1)


def expected_tau(rates: Sequence[float], window: int) -> float:
    """Expected tokens per pass at a fixed window: 1 + sum_j prod_{i<=j} rate_i."""
    e, run = 1.0, 1.0
    for i in range(window):
        run *= rates[min(i, len(rates) - 1)] if rates else 0.0
        e += run
    return e


class ReplayDrafter:
    name = "replay"

    def __init__(
        self,
        reference: Sequence[int],
        rates: Sequence[float] = (1.0,),
        *,
        vocab_size: int = 0,
        seed: int = 0,
        name: str = "replay",
    ) -> None:
        if not rates or any(not 0.0 <= r <= 1.0 for r in rates):
            raise ValueError("rates must be probabilities, at least one")
        self.reference = list(reference)
        self.rates = list(rates)
        self.vocab_size = vocab_size
        self.name = name
        self._seed = seed
        self._rng = random.Random(seed)
        self.proposed = 0
        self.corrupted = 0

    def reset(self) -> None:
        self._rng = random.Random(self._seed)

    def rate(self, i: int) -> float:
        return self.rates[min(i, len(self.rates) - 1)]

    def _wrong(self, token: int) -> int:
        n = self.vocab_size or (max(self.reference) + 2 if self.reference else 2)
        t = (token + 1 + self._rng.randrange(max(1, n - 1))) % n
        return t if t != token else (token + 1) % n

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        n = len(history)
        ref = self.reference
        if max_len <= 0 or n >= len(ref) or n == 0 or history[n - 1] != ref[n - 1]:
            return Draft((), self.name)
        if history[0] != ref[0] or list(history[-8:]) != ref[max(0, n - 8) : n]:
            return Draft((), self.name)
        out: list[int] = []
        for i, tok in enumerate(ref[n : n + max_len]):
            r = self.rate(i)
            if r >= 1.0 or (r > 0.0 and self._rng.random() < r):
                out.append(tok)
            else:
                out.append(self._wrong(tok))
                self.corrupted += 1
        self.proposed += len(out)
        return Draft(tuple(out), self.name)
