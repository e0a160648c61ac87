"""Long prompt additions computed on the weights in their other CPU layout, then copied over.

On some CPUs llama.cpp's repacked weight layout decodes and verifies faster but prefills
slower than the plain one (``engine.calibrate`` times both). The side context sits on a
second load of the same GGUF in the other layout (mmapped: the file's pages are shared): a
prompt whose new part is long enough is computed there and its KV state copied into the
decode context, so the first token and every agent step pay the faster prefill while
decoding keeps the faster layout. The KV cells are the same model's keys and values either
way; only the kernels that computed them differ. A copy costs time in proportion to the
whole sequence, so a short addition to a long context stays on the decode context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from engine.prefixcache import common_prefix

MIN_NEW = 32  # fewer new tokens never pay for the copies
MARGIN = 1.5  # the modelled saving must beat the copies by this factor (timings on a CPU wander)


class StateContext(Protocol):
    def decode(self, tokens: Sequence[int], pos0: int, *, all_logits: bool) -> np.ndarray | None: ...

    def truncate(self, pos: int) -> None: ...

    def copy_seq_to(self, other: Any) -> bool: ...  # another context of the same kind


@dataclass(frozen=True)
class SideRates:
    """Seconds per token, as calibrated: prefill on the decode layout, on the side layout, and
    one copy of the KV state (per token of the sequence)."""

    main_s: float
    side_s: float
    copy_s: float

    def worth(self, new: int, total: int, copies: int) -> bool:
        if new < MIN_NEW:
            return False
        return new * (self.main_s - self.side_s) > MARGIN * copies * total * self.copy_s


ALWAYS = SideRates(1.0, 0.0, 0.0)  # a forced side prefill (config): every addition of MIN_NEW tokens


class SidePrefill:
    """The side context and the exact token list its KV cache holds."""

    def __init__(self, ctx: StateContext, rates: SideRates) -> None:
        self.ctx = ctx
        self.rates = rates
        self.kv: list[int] = []
        self.used = 0  # prefills computed here (for stats and tests)

    def prefill(self, target_ctx: StateContext, target_kv: list[int], prompt: Sequence[int]) -> np.ndarray | None:
        """Compute ``prompt`` beyond ``target_kv`` (a prefix of it) here and copy the result into the
        target context; ``target_kv`` is updated in place. Returns the last token's logits, or None
        when the side is not worth it (nothing changed) or a copy failed (``target_kv`` then says
        what the target still holds)."""
        common = len(target_kv)
        have = common_prefix(self.kv, prompt)
        start = min(max(have, common), len(prompt) - 1)  # the side may already hold more than the target
        side_has = have >= common
        if not self.rates.worth(len(prompt) - start, len(prompt), 1 if side_has else 2):
            return None
        if side_has:
            self.ctx.truncate(start)
            del self.kv[start:]
        else:
            if not target_ctx.copy_seq_to(self.ctx):
                self.kv = []
                return None
            self.kv = list(target_kv)
        rows = self.ctx.decode(list(prompt[start:]), start, all_logits=False)
        assert rows is not None
        last = np.array(rows[-1], copy=True)  # the side's logits buffer is its own, but keep it past later calls
        self.kv = list(prompt)
        if not self.ctx.copy_seq_to(target_ctx):  # the target was cleared by the failed copy
            del target_kv[:]
            return None
        target_kv[:] = prompt
        self.used += 1
        return last
