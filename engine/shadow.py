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
    def settle(self, key: str, bucket: int, drafted: int, accepted: int, proposed: int = 0, start: int = 0,
               given: int = 0) -> None: ...


@dataclass
class Shadow:
    """One proposal followed by plain passes. A long one that keeps matching (a copy of the
    prompt's file) is credited every CREDIT_EVERY tokens instead of only when it settles: a
    40-token proposal would otherwise say nothing for 40 passes, the very passes in which its
    evidence would have started the windows. It may continue a proposal matched before it (the
    rest of a window accepted whole): its token i is then position ``offset`` + i of its bucket."""

    key: str  # acceptance key ("drafter:mode")
    bucket: int
    tokens: tuple[int, ...]
    matched: int = 0  # leading tokens the plain passes have emitted as proposed
    credited: int = 0  # leading positions already recorded as accepted
    offset: int = 0

    @property
    def position(self) -> int:
        """The bucket position of the next token it proposes."""
        return self.offset + self.matched

    def leads(self, tokens: tuple[int, ...]) -> bool:
        """``tokens`` go on as its unmatched rest does (the drafter is still on this copy)."""
        rest = self.tokens[self.matched :]
        m = min(len(rest), len(tokens))
        return m > 0 and rest[:m] == tokens[:m]

    def feed(self, token: int, sink: Settles) -> bool:
        """One token a plain pass emitted; True once the proposal is settled (and recorded)."""
        o = self.offset
        if token == self.tokens[self.matched]:
            self.matched += 1
            if self.matched < len(self.tokens):
                if self.matched - self.credited >= CREDIT_EVERY:
                    sink.settle(self.key, self.bucket, o + self.matched, o + self.matched, o + len(self.tokens),
                                start=o + self.credited, given=o)
                    self.credited = self.matched
                return False
            sink.settle(self.key, self.bucket, o + len(self.tokens), o + self.matched, start=o + self.credited, given=o)
            return True
        sink.settle(self.key, self.bucket, o + self.matched + 1, o + self.matched, o + len(self.tokens),
                    start=o + self.credited, given=o)
        return True

    def settle(self, sink: Settles) -> None:
        """A verify pass comes next: record what the plain passes showed so far."""
        if self.matched > self.credited:
            o = self.offset
            sink.settle(self.key, self.bucket, o + self.matched, o + self.matched, start=o + self.credited, given=o)
