"""Stops a reply caught in a loop: the same block of text written again and again, back to back.

A small model at low temperature sometimes writes one function, then the same function again, until the
token limit (4,096 tokens once, seven copies), or counts on without end (``if n == 3: ...``, ``if n == 4:
...``) to the end of the context. Drafting makes such a loop cheap per token but not free, and what
follows is never wanted. The watch looks only at the tail of the reply, for either of two things:

- a block of at least ``MIN_PERIOD`` characters that occurs ``REPEATS`` times in a row at its very end
  (legitimate code repeats lines, rarely hundreds of characters verbatim three times running); the reply
  is kept up to the end of the first copy;
- with every number read as the same number, one block repeated over the last ``LONG_SPAN`` characters
  (a counter loop; a hand-written table of cases is far shorter); the reply is kept as it stands.

Where the prompt itself holds the repetition (a table in a file being rewritten), copying it is not a loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MIN_PERIOD = 100  # shorter verbatim periods are lines of a table or a test list, not a loop
REPEATS = 3
KEY = 48  # the tail searched for to find the period: long enough that a match is not chance
LONG_SPAN = 4000  # characters one numbered block must fill, repeated, to count as a counter loop
LONG_MIN_PERIOD = 12  # a counter loop's block: at least a short line
WINDOW = 24_000  # only the reply's tail is searched: a longer period is not a loop anyone waits out
CHECK_EVERY = 32  # characters of new text between checks, so the watch costs little per token
COUNTER_EVERY = 512  # ... and between counter checks, which mask numbers over two spans (~0.2 ms)
_NUMBER = re.compile(r"\d+")


def _smallest_period(block: str) -> int:
    return (block + block).find(block, 1)


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
            # a block made of a shorter one (the same line forty times) repeats lines, it is not a loop
            return period if _smallest_period(text[-period:]) == period else 0
        end = at + KEY - 1  # look for an earlier occurrence: a longer period


def counter_period(text: str, span: int = LONG_SPAN, min_period: int = LONG_MIN_PERIOD) -> int:
    """With numbers masked, the period of a block that fills the last ``span`` characters, or 0."""
    masked = _NUMBER.sub("0", text[-2 * span:])
    if len(masked) < span:
        return 0
    tail = masked[-span:]
    key = tail[-KEY:]
    at = tail.rfind(key, 0, len(tail) - 1)
    if at < 0:
        return 0
    period = len(tail) - (at + KEY)
    if period < min_period or period * 4 > span or tail[:-period] != tail[period:]:  # many repeats, not two
        return 0
    return period if _smallest_period(tail[-period:]) == period else 0


@dataclass
class LoopWatch:
    """Fed the reply's text as it streams; ``period`` is set once the reply loops."""

    allow: str = ""  # the prompt: a block it already repeats (a table, generated code) is copied, not a loop
    period: int = 0
    counter: bool = False  # the loop was a counting one (numbers masked): nothing is cut
    _parts: list[str] = field(default_factory=list, repr=False)
    _pending: list[str] = field(default_factory=list, repr=False)  # fed since the last check
    _tail: str = field(default="", repr=False)
    _size: int = field(default=0, repr=False)
    _checked: int = field(default=0, repr=False)
    _counted: int = field(default=0, repr=False)
    _masked_allow: str | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        """What was fed up to the moment the loop was seen."""
        return "".join(self._parts)

    def feed(self, delta: str) -> bool:
        """Adds ``delta``; True once the reply is looping (and from then on)."""
        if self.period:
            return True
        self._parts.append(delta)
        self._pending.append(delta)
        self._size += len(delta)
        if self._size - self._checked >= CHECK_EVERY:
            self._tail = (self._tail + "".join(self._pending))[-WINDOW:]
            self._pending.clear()
            self._checked = self._size
            self._check()
        return bool(self.period)

    def _check(self) -> None:
        tail = self._tail
        period = loop_period(tail)
        if period and (tail[-period:] * 2)[: period + KEY] not in self.allow:
            self.period = period
            return
        if self._size - self._counted < COUNTER_EVERY:
            return
        self._counted = self._size
        period = counter_period(tail)
        if period:
            if self._masked_allow is None:
                self._masked_allow = _NUMBER.sub("0", self.allow)
            probe = _NUMBER.sub("0", tail[-3 * period:])[-2 * period:]
            if probe not in self._masked_allow:
                self.period, self.counter = period, True

    def describe(self) -> str:
        """One line for the user: what the loop was and what was kept."""
        if self.counter:
            return (f"stopped the reply: it repeated one {self.period}-character pattern, only its numbers "
                    f"changing, for {LONG_SPAN} characters (kept what it wrote)")
        return (f"stopped the reply: it wrote the same {self.period} characters {REPEATS} times in a row "
                "(kept the first)")

    def kept(self, text: str) -> str:
        """``text`` (the reply as the engine returned it) up to the end of the loop's first copy."""
        if not self.period:
            return text
        looped = self.text[: self._kept_chars()]
        return looped if text.startswith(looped) else text

    def kept_pieces(self) -> int:
        """How many of the fed pieces lie wholly inside what ``kept`` keeps (a server cuts their token ids)."""
        end, at = self._kept_chars(), 0
        for n, piece in enumerate(self._parts):
            if at + len(piece) > end:
                return n
            at += len(piece)
        return len(self._parts)

    def _kept_chars(self) -> int:
        if self.counter:
            return self._size
        p = self.period
        seen = self.text
        start = len(seen) - p
        floor = max(0, len(seen) - WINDOW)
        while start > floor and seen[start - 1] == seen[start - 1 + p]:  # back to where the repetition begins
            start -= 1
        return start + p
