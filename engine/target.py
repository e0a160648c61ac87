"""The target context and the exact token list its KV cache holds (engine.decoder's view of it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.sideprefill import SidePrefill
from engine.sideverify import SideVerify


class Target:
    """A target context plus the exact token list its KV cache holds.

    With a side context (the other CPU weight layout) long prompt additions are computed there
    (engine.sideprefill), and with ``wide`` the sequence itself moves there for wide verify
    passes and back for narrow ones (engine.sideverify); ``kv`` is what the live context holds.
    """

    def __init__(self, ctx, side: SidePrefill | None = None, wide: SideVerify | None = None,
                 overlap: bool = False) -> None:  # ctx: engine.backend.Context (duck-typed for tests)
        self.ctx = ctx
        self.kv: list[int] = []
        self.side = side
        self.wide = wide if side is not None else None
        # plain steps started before the policy picks (``submit``/``collect``): on a GPU the host's
        # pick then runs while the device computes the step (one context only: no side)
        self.overlap = overlap and side is None and hasattr(ctx, "submit")
        self.on_side = False  # the sequence lives on the side context now
        self.moves = 0  # copies of the sequence between the two (for stats and tests)

    @property
    def n_ctx(self) -> int:
        return int(self.ctx.n_ctx)

    def prefill(self, prompt: Sequence[int]) -> tuple[np.ndarray, int]:
        """Evaluate the prompt reusing the longest cached prefix; returns (last logits, reused)."""
        if not prompt:
            raise ValueError("empty prompt")
        self.home()
        common = 0
        m = min(len(self.kv), len(prompt))
        while common < m and self.kv[common] == prompt[common]:
            common += 1
        if common == len(prompt):
            common -= 1  # re-evaluate the last token to get its logits
        self.rollback(common)
        if self.side is not None:
            row = self.side.prefill(self.ctx, self.kv, prompt)
            if row is not None:
                return row, common
            common = len(self.kv)  # a failed copy leaves the target empty
        rows = self.eval(prompt[common:], all_logits=False)
        assert rows is not None
        return rows[-1], common

    def eval(self, tokens: Sequence[int], *, all_logits: bool) -> np.ndarray | None:
        if self.wide is not None and (all_logits or len(tokens) == 1):  # verify passes and plain steps; a prompt stays put
            self._place(self.width(len(tokens)) if all_logits else 1)
        rows = self._live().decode(tokens, len(self.kv), all_logits=all_logits)
        self.kv.extend(tokens)
        return rows

    def submit(self, token: int) -> None:
        """Start a plain step on the device; ``collect`` waits for its row."""
        self.ctx.submit(token, len(self.kv))
        self.kv.append(token)

    def collect(self) -> np.ndarray:
        return self.ctx.collect()

    def width(self, n: int) -> int:
        """The rows an ``n``-row verify pass evaluates on the live context (padded, on a GPU)."""
        padded = getattr(self._live(), "padded", None)
        return int(padded(n)) if padded is not None else n

    def rollback(self, n_keep: int) -> None:
        if n_keep < len(self.kv):
            self._live().truncate(n_keep)
            del self.kv[n_keep:]

    def _live(self):
        """The context that holds the sequence now."""
        return self.side.ctx if self.on_side and self.side is not None else self.ctx

    def _place(self, n: int) -> None:
        """Move the sequence to the context an ``n``-row pass is cheaper on, when that pays."""
        side, wide = self.side, self.wide
        assert side is not None and wide is not None
        if self.on_side:
            if not wide.stay(n) and not self._copy_home():
                self.on_side, self.wide = True, None  # the decode context was cleared: the side keeps the sequence
        elif wide.go(n, len(self.kv)):
            if self.ctx.copy_seq_to(side.ctx):
                self.on_side = True
                side.kv = list(self.kv)
                self.moves += 1
            else:
                side.kv = []

    def home(self) -> None:
        """Between requests: the sequence back on the decode context (prefill, prefix states and
        the side prefill expect it there). A failed copy empties the cache, which the next
        prefill computes again (the side still holds it, so the side prefill starts from there)."""
        if self.on_side and not self._copy_home():
            self.kv = []

    def _copy_home(self) -> bool:
        """Copy the sequence from the side to the decode context, which then holds it (on success)."""
        side = self.side
        assert side is not None
        self.on_side = False
        side.kv = list(self.kv)
        if not side.ctx.copy_seq_to(self.ctx):
            return False
        self.moves += 1
        return True
