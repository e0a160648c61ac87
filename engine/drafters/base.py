"""The drafter protocol: given the token history, propose up to ``max_len`` next tokens."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class Draft:
    """Proposed tokens. ``probs`` is None for deterministic drafts (verified by sample-and-match);
    for stochastic drafts it holds q(token) distributions, one row per drafted token
    (verified by the min(1, p/q) rule)."""

    tokens: tuple[int, ...]
    source: str
    probs: np.ndarray | None = None
    confidence: int = 0  # drafter-specific evidence (n-gram: tokens of context matched)
    resync: bool = False  # n-gram: picked up the text it was copying again, just after a change
    opening: bool = False  # n-gram: the whole reply so far copies the text this draft continues
    echo: bool = False  # n-gram: it continues the reply's own earlier text, not the prompt's or a file's

    def __len__(self) -> int:
        return len(self.tokens)


def cut(d: Draft, k: int) -> Draft:
    """The first k tokens of a draft (and of its q)."""
    if len(d.tokens) <= k:
        return d
    probs = d.probs[:k] if d.probs is not None else None
    return Draft(d.tokens[:k], d.source, probs, d.confidence, d.resync, d.opening, d.echo)


def until_stop(d: Draft, is_stop: Callable[[int], bool] | None) -> Draft:
    """The draft up to its first end-of-generation token: a copy of an earlier turn runs on into
    the template's next turn, and rows past the end would be verified for nothing (a 20-token tool
    call matched in the transcript opened a window of dozens of rows)."""
    if is_stop is not None:
        for i, t in enumerate(d.tokens):
            if is_stop(t):
                return cut(d, i + 1)
    return d


@runtime_checkable
class Drafter(Protocol):
    name: str

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        """Draft continuations of ``history`` (the full token sequence so far: prompt + output).

        The drafter keeps whatever state it needs in sync with ``history`` itself (it may
        be a continuation of the last call's history or a different sequence altogether).
        """
        ...

    def reset(self) -> None: ...
