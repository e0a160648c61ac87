"""Stops a reply caught in a loop: the same block of text written again and again, back to back.

A small model at low temperature sometimes writes one function, then the same function again, until the
token limit (4,096 tokens once, seven copies). Drafting makes such a loop cheap per token but not free,
and what follows the second copy is never wanted. The watch looks only at the tail of the reply: a
block of at least ``MIN_PERIOD`` characters that occurs ``REPEATS`` times in a row at its very end.
Legitimate code repeats lines, rarely hundreds of characters verbatim three times running; where the prompt
itself repeats the block (more than one copy back to back), copying it is not a loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MIN_PERIOD = 100  # shorter periods are lines of a table or a test list, not a loop
REPEATS = 3
KEY = 48  # the tail searched for to find the period: long enough that a match is not chance
CHECK_EVERY = 32  # characters of new text between checks, so the watch costs little per token


def loop_period(text: str, min_period: int = MIN_PERIOD, repeats: int = REPEATS) -> int:
    """The length of the block repeated ``repeats`` times at the end of ``text``, or 0 when there is none."""
    if len(text) < min_period * repeats:
        return 0
    key = text[-KEY:]
    end = len(text) - 1
    while True:
        at = text.rfind(key, 0, end)
        if at < 0:
            return 0
        period = len(text) - (at + KEY)
        if period * repeats > len(text):
            return 0
        if period >= min_period and text[-period * repeats:] == text[-period:] * repeats:
            block = text[-period:]
            # a block made of a shorter one (the same line forty times) repeats lines, it is not a loop
            return period if (block + block).find(block, 1) == period else 0
        end = at + KEY - 1  # look for an earlier occurrence: a longer period


@dataclass
class LoopWatch:
    """Fed the reply's text as it streams; ``period`` is set once the reply loops."""

    allow: str = ""  # the prompt: a block it already repeats (a table, generated code) is copied, not a loop
    min_period: int = MIN_PERIOD
    repeats: int = REPEATS
    text: str = ""
    period: int = 0
    _checked: int = field(default=0, repr=False)

    def feed(self, delta: str) -> bool:
        """Adds ``delta``; True once the reply is looping (and from then on)."""
        if self.period:
            return True
        self.text += delta
        if len(self.text) - self._checked >= CHECK_EVERY:
            self._checked = len(self.text)
            period = loop_period(self.text, self.min_period, self.repeats)
            tail = self.text[-period:] if period else ""
            if period and (tail * 2)[: period + KEY] not in self.allow:
                self.period = period
        return bool(self.period)

    def kept(self, text: str) -> str:
        """``text`` (the reply as the engine returned it) up to the end of the loop's first copy."""
        if not self.period:
            return text
        seen, p = self.text, self.period
        start = len(seen) - p
        while start > 0 and seen[start - 1] == seen[start - 1 + p]:  # back to where the repetition begins
            start -= 1
        looped = seen[: start + p]
        return looped if text.startswith(looped) else text
