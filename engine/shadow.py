"""Free evidence for lookup drafters: a proposal the policy chose not to verify is checked
against the tokens that the plain passes which followed it emit.

Drafting by lookup (the n-gram overlay) costs nothing, so the engine proposes on every pass
even when the policy decides a window would not pay. Plain decoding then emits, one pass at
a time, exactly the tokens the verifier would have compared the proposal with: the target's
argmax when greedy, a sample from the same distribution p when sampled, where the chance
that it equals the draft is p(draft), the sample-and-match acceptance itself. So the
acceptance estimates of a bucket the policy has shelved keep learning without paying for
probe passes, and start paying the moment the workload makes them worth it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

CREDIT_EVERY = 8  # matched tokens of a long proposal credited before it settles


class Settles(Protocol):
    def settle(self, key: str, bucket: int, drafted: int, accepted: int, proposed: int = 0, start: int = 0) -> None: ...


@dataclass
class Shadow:
    """One proposal followed by plain passes. A long one that keeps matching (a copy of the
    prompt's file) is credited every CREDIT_EVERY tokens instead of only when it settles: a
    40-token proposal would otherwise say nothing for 40 passes, the very passes in which its
    evidence would have started the windows."""

    key: str  # acceptance key ("drafter:mode")
    bucket: int
    tokens: tuple[int, ...]
    matched: int = 0  # leading tokens the plain passes have emitted as proposed
    credited: int = 0  # leading positions already recorded as accepted

    def feed(self, token: int, sink: Settles) -> bool:
        """One token a plain pass emitted; True once the proposal is settled (and recorded)."""
        if token == self.tokens[self.matched]:
            self.matched += 1
            if self.matched < len(self.tokens):
                if self.matched - self.credited >= CREDIT_EVERY:
                    sink.settle(self.key, self.bucket, self.matched, self.matched, len(self.tokens), start=self.credited)
                    self.credited = self.matched
                return False
            sink.settle(self.key, self.bucket, len(self.tokens), self.matched, start=self.credited)
            return True
        sink.settle(self.key, self.bucket, self.matched + 1, self.matched, len(self.tokens), start=self.credited)
        return True

    def settle(self, sink: Settles) -> None:
        """A verify pass comes next: record what the plain passes showed so far."""
        if self.matched > self.credited:
            sink.settle(self.key, self.bucket, self.matched, self.matched, start=self.credited)
