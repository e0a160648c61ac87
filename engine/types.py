"""The engine's public vocabulary: sampling settings, events, stats and the Engine protocol.

Everything here is plain data (frozen dataclasses) so front ends (agent, TUI, server)
can depend on it without importing llama_cpp.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar, runtime_checkable

_K = TypeVar("_K")

SPEC_MODES = ("off", "ngram", "draft", "mtp", "auto")


@dataclass(frozen=True)
class SamplingParams:
    """How to pick tokens. temperature 0 means greedy."""

    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    min_p: float = 0.0
    repeat_penalty: float = 1.0
    repeat_last_n: int = 64
    seed: int | None = None
    # llama.cpp's order: top-k, top-p and min-p on the untempered softmax, the temperature on what they keep
    temper_last: bool = False

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0


@dataclass(frozen=True)
class GenerateRequest:
    """One completion. ``prompt`` is raw text (already chat-templated if needed) or token ids."""

    prompt: str | tuple[int, ...]
    max_tokens: int = 512
    sampling: SamplingParams = field(default_factory=SamplingParams)
    stop: tuple[str, ...] = ()
    spec: str = "auto"  # one of SPEC_MODES


def tau(emitted_tokens: int, verify_passes: int) -> float:
    """τ, the one definition every display uses: tokens emitted per target pass (accepted drafts
    plus the target's own token; the final end-of-generation token counts, so plain decode is 1.00)."""
    return emitted_tokens / verify_passes if verify_passes else 0.0


def ceiling_fraction(decode_tok_s: float, ceiling_tok_s: float) -> float:
    """Decode speed as a share of the memory-bandwidth ceiling (0 when no ceiling is known)."""
    return decode_tok_s / ceiling_tok_s if ceiling_tok_s > 0 else 0.0


def _sum_counts(a: dict[_K, int], b: dict[_K, int]) -> dict[_K, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


@dataclass(frozen=True)
class GenStats:
    """Counters and rates of one generation (or a running snapshot of one, or a sum of them: ``+``)."""

    prompt_tokens: int = 0
    reused_tokens: int = 0  # prompt tokens served from the KV cache (prefix reuse)
    completion_tokens: int = 0
    prefill_s: float = 0.0
    decode_s: float = 0.0
    wall_s: float = 0.0
    first_token_s: float = 0.0  # request to first completion token (prefill included); summed over a total
    verify_passes: int = 0  # llama_decode calls in the decode phase
    drafted: dict[str, int] = field(default_factory=dict)  # per drafter
    accepted: dict[str, int] = field(default_factory=dict)  # per drafter
    accept_by_pos: tuple[float, ...] = ()  # P(accept at draft position i | reached i)
    ceiling_tok_s: float = 0.0  # memory bandwidth / bytes of weights per token
    near_tie_divergences: int = 0
    emitted_tokens: int = 0  # tokens the passes produced: completion plus a final end-of-generation token
    pass_rows: dict[int, int] = field(default_factory=dict)  # decode passes by rows evaluated (1 = plain)
    draft_s: float = 0.0  # of decode_s: choosing each pass's window and drafting it (host work between passes)
    step_s: float = 0.0  # of decode_s: the single-row passes (pass_rows[1]), each from its launch through its token

    @property
    def emitted(self) -> int:
        """Tokens the passes produced (a snapshot without the count falls back to the completion)."""
        return max(self.emitted_tokens, self.completion_tokens)

    @property
    def tau(self) -> float:
        return tau(self.emitted, self.verify_passes)

    def __add__(self, o: GenStats) -> GenStats:
        """The sum of two generations (the one place stats are added up): counters and seconds add,
        the ceiling is the latest known, per-position acceptance is dropped (it does not add)."""
        return GenStats(
            prompt_tokens=self.prompt_tokens + o.prompt_tokens,
            reused_tokens=self.reused_tokens + o.reused_tokens,
            completion_tokens=self.completion_tokens + o.completion_tokens,
            prefill_s=self.prefill_s + o.prefill_s,
            decode_s=self.decode_s + o.decode_s,
            wall_s=self.wall_s + o.wall_s,
            first_token_s=self.first_token_s + o.first_token_s,
            verify_passes=self.verify_passes + o.verify_passes,
            drafted=_sum_counts(self.drafted, o.drafted),
            accepted=_sum_counts(self.accepted, o.accepted),
            ceiling_tok_s=o.ceiling_tok_s or self.ceiling_tok_s,
            near_tie_divergences=self.near_tie_divergences + o.near_tie_divergences,
            emitted_tokens=self.emitted + o.emitted,
            pass_rows=_sum_counts(self.pass_rows, o.pass_rows),
            draft_s=self.draft_s + o.draft_s,
            step_s=self.step_s + o.step_s,
        )

    @property
    def prefill_tok_s(self) -> float:
        n = self.prompt_tokens - self.reused_tokens
        return n / self.prefill_s if self.prefill_s > 0 else 0.0

    @property
    def decode_tok_s(self) -> float:
        return self.completion_tokens / self.decode_s if self.decode_s > 0 else 0.0

    @property
    def wall_tok_s(self) -> float:
        return self.completion_tokens / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def ceiling_frac(self) -> float:
        return ceiling_fraction(self.decode_tok_s, self.ceiling_tok_s)

    def to_dict(self) -> dict:
        return {
            "prompt_tokens": self.prompt_tokens,
            "reused_tokens": self.reused_tokens,
            "completion_tokens": self.completion_tokens,
            "prefill_s": round(self.prefill_s, 4),
            "decode_s": round(self.decode_s, 4),
            "wall_s": round(self.wall_s, 4),
            "first_token_s": round(self.first_token_s, 4),
            "verify_passes": self.verify_passes,
            "tau": round(self.tau, 3),
            "accept_by_pos": [round(a, 3) for a in self.accept_by_pos],
            "drafted": dict(self.drafted),
            "accepted": dict(self.accepted),
            "prefill_tok_s": round(self.prefill_tok_s, 2),
            "decode_tok_s": round(self.decode_tok_s, 2),
            "wall_tok_s": round(self.wall_tok_s, 2),
            "ceiling_tok_s": round(self.ceiling_tok_s, 2),
            "ceiling_frac": round(self.ceiling_frac, 4),
            "near_tie_divergences": self.near_tie_divergences,
            "emitted_tokens": self.emitted_tokens,
            "pass_rows": {str(k): v for k, v in sorted(self.pass_rows.items())},
            "draft_s": round(self.draft_s, 4),
            "step_s": round(self.step_s, 4),
        }


Progress = Callable[[str, float], None]  # a load's progress: (what it is doing, fraction done)


# ---- events streamed by Engine.stream -------------------------------------------------


@dataclass(frozen=True)
class TokenEvent:
    """New completion text (may cover several tokens accepted in one verify pass)."""

    text: str
    token_ids: tuple[int, ...]


@dataclass(frozen=True)
class StatsEvent:
    """A running snapshot of the generation's stats (sent a few times a second)."""

    stats: GenStats


@dataclass(frozen=True)
class DoneEvent:
    """The generation ended. finish_reason: 'stop' | 'length' | 'cancelled' | 'error'."""

    text: str
    token_ids: tuple[int, ...]
    finish_reason: str
    stats: GenStats
    error: str | None = None


EngineEvent = TokenEvent | StatsEvent | DoneEvent


@dataclass(frozen=True)
class ModelInfo:
    name: str
    path: str
    n_ctx: int
    arch: str = ""
    quant: str = ""
    size_bytes: int = 0
    draft_name: str | None = None
    backend: str = "llama.cpp"
    # what app.wire reads to pick the model's wire format (tokenizer.chat_template, the
    # vocabulary's control tokens, or a family the engine declares outright)
    chat_template: str = field(default="", repr=False)
    special_tokens: tuple[str, ...] = field(default=(), repr=False)
    family: str = ""
    n_vocab: int = 0  # token ids are below this; 0 when the backend does not say


class CancelToken:
    """Set from any thread; the engine checks it between verify passes."""

    def __init__(self) -> None:
        self._ev = threading.Event()

    def cancel(self) -> None:
        self._ev.set()

    @property
    def cancelled(self) -> bool:
        return self._ev.is_set()


class LinkedCancel(CancelToken):
    """Cancelled when its own cancel() is called or when the parent token is."""

    def __init__(self, parent: CancelToken | None) -> None:
        super().__init__()
        self._parent = parent

    @property
    def cancelled(self) -> bool:
        return super().cancelled or (self._parent is not None and self._parent.cancelled)


@runtime_checkable
class Engine(Protocol):
    """What front ends (agent loop, TUI, server) need from an engine.

    Implementations: engine.local.LocalEngine (llama.cpp in-process),
    engine.scripted.ScriptedEngine (tests), app-side remote engines (HTTP).
    """

    @property
    def info(self) -> ModelInfo: ...

    def count_tokens(self, text: str) -> int: ...

    def chat_prompt(
        self, messages: Sequence[dict], tools: Sequence[dict] | None = None, add_generation_prompt: bool = True
    ) -> str:
        """Render messages ({'role', 'content', ...}) with the model's chat template."""
        ...

    def stream(self, request: GenerateRequest, cancel: CancelToken | None = None) -> Iterator[EngineEvent]:
        """Generate; yields TokenEvent/StatsEvent and always ends with exactly one DoneEvent."""
        ...

    def register_context(self, key: str, text: str) -> None:
        """Feed text (e.g. a repository file) to the n-gram drafter. Same key replaces."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Primes(Protocol):
    """An engine that can compute a prompt's KV cache ahead of the request that will start with it."""

    def prime(self, prompt: str, cancel: CancelToken | None = None, save: bool = True) -> int:
        """Compute ``prompt`` now (blocking; idle time, such as while the user types); returns
        the tokens computed afresh. The next request sharing its prefix pays only for the rest.
        ``save``: keep it as a prefix state for later processes (a draft message is not worth it)."""
        ...


def prime(engine: Engine, prompt: str, cancel: CancelToken | None = None, save: bool = True) -> int:
    """``engine.prime`` where the engine has it; 0 (nothing computed) where it does not."""
    return engine.prime(prompt, cancel, save) if isinstance(engine, Primes) else 0


def generate(engine: Engine, request: GenerateRequest, cancel: CancelToken | None = None) -> DoneEvent:
    """Run a request to completion and return its DoneEvent."""
    done: DoneEvent | None = None
    for ev in engine.stream(request, cancel):
        if isinstance(ev, DoneEvent):
            done = ev
    assert done is not None, "engine stream ended without DoneEvent"
    return done
