"""The synthetic bench's measuring loops: raw decode, the engine's loop, the verify curve."""

# ruff: noqa: I001  (engine.backend, which imports llama_cpp, must come before numpy)
from __future__ import annotations

from engine import backend

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.decoder import run
from engine.target import Target
from engine.policy import Acceptance, CostCurve
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.slot import DrafterSlot
from engine.types import GenerateRequest, SamplingParams, tau

Progress = Callable[[str, float], None]
PROMPT_TOKENS = 512


class ConditionalAcceptance(Acceptance):
    """The estimate with positions counted as reached only up to the first rejection, so ``rates``
    are P(accept i | accepted < i) as the policy multiplies them. Once this lab's proposed fix, it
    is now ``engine.policy.Acceptance.update`` itself; the name keeps the bench's "conditional" column."""


class _Bench:
    def __init__(self, model: backend.Model, ctx: backend.Context, prompt: list[int], say: Progress) -> None:
        self.model = model
        self.ctx = ctx
        self.prompt = prompt
        self.say = say

    def prefill(self) -> tuple[float, int]:
        self.ctx.clear()
        t0 = time.perf_counter()
        rows = self.ctx.decode(self.prompt, 0, all_logits=False)
        dt = time.perf_counter() - t0
        assert rows is not None
        return dt, int(np.argmax(rows[-1]))

    def raw_loop(self, n: int) -> tuple[list[float], list[int]]:
        """Prefill, then n-1 single-token steps of decode + argmax. Returns step times and tokens."""
        _, tok = self.prefill()
        out = [tok]
        pos = len(self.prompt)
        times: list[float] = []
        decode = self.ctx.decode
        for _ in range(n - 1):
            t0 = time.perf_counter()
            rows = decode([tok], pos, all_logits=False)
            tok = int(np.argmax(rows[-1]))  # type: ignore[index]
            times.append(time.perf_counter() - t0)
            out.append(tok)
            pos += 1
        return times, out

    def engine_run(
        self,
        n: int,
        spec: SpecConfig,
        slots: dict[str, DrafterSlot],
        curve: dict[int, float],
        acceptance: Acceptance | None = None,
    ) -> dict[str, Any]:
        self.ctx.clear()
        target = Target(self.ctx)
        sp = Speculator(CostCurve(dict(curve)), slots, acceptance)
        req = GenerateRequest(
            prompt=tuple(self.prompt), max_tokens=n, sampling=SamplingParams(temperature=0.0)
        )
        done = run(target, self.model, self.prompt, req, spec, sp, lambda _e: None)  # type: ignore[arg-type]
        st = done.stats
        passes = st.verify_passes - 1  # the first pass is the prefill
        return {
            "finish": done.finish_reason,
            "tokens": list(done.token_ids),
            "completion": st.completion_tokens,
            "decode_s": st.decode_s,
            "passes": passes,
            "step_s": st.decode_s / passes if passes else 0.0,
            "tok_s": (st.completion_tokens - 1) / st.decode_s if st.decode_s else 0.0,
            "tau": tau(st.emitted - 1, passes),  # the one definition, over the passes after the prefill
            "drafted": sum(st.drafted.values()),
            "accepted": sum(st.accepted.values()),
        }

    def curve(self, base: int, max_n: int, reps: int) -> dict[int, float]:
        """Median seconds to evaluate n rows (all logits) at position ``base``."""
        rng = np.random.default_rng(1)
        self.ctx.clear()
        self.ctx.decode(self.prompt[:base], 0, all_logits=False)
        out: dict[int, float] = {}
        for n in range(1, max_n + 1):
            ts = []
            for _ in range(reps + 1):
                toks = [int(t) for t in rng.integers(1000, 100000, n)]
                t0 = time.perf_counter()
                self.ctx.decode(toks, base, all_logits=True)
                ts.append(time.perf_counter() - t0)
                self.ctx.truncate(base)
            out[n] = statistics.median(ts[1:])
            self.say("verify-cost curve", n / max_n)
        return out


def _pick_prompt(model: backend.Model, n: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    return [int(t) for t in rng.integers(1000, min(100000, model.n_vocab - 1), n)]
