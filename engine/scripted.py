"""A scripted engine: a real Engine backend that replays canned replies.

Used by the tests of the agent loop, the tools, the TUI and the server: it tokenizes
(one token per character chunk), renders its family's prompt (app.wire), streams, honours cancellation and
max_tokens, and reports stats the way the real engine does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence

from engine.chat_template import chat_prompt as render_prompt
from engine.types import (
    CancelToken,
    DoneEvent,
    EngineEvent,
    GenerateRequest,
    GenStats,
    ModelInfo,
    StatsEvent,
    TokenEvent,
)

Reply = str | Callable[[str], str]

CHARS_PER_TOKEN = 4


class ScriptExhausted(RuntimeError):
    pass


class ScriptedEngine:
    """Replays ``replies`` in order, one per ``stream`` call.

    A reply is a string or a function of the prompt returning one. ``delay`` seconds pass
    between streamed tokens (0 for speed; a few ms for cancellation tests).
    """

    def __init__(
        self,
        replies: Sequence[Reply] = (),
        *,
        delay: float = 0.0,
        n_ctx: int = 32768,
        name: str = "scripted",
        tau: float = 2.5,
        family: str = "qwen2.5",
        chat_template: str = "",
    ) -> None:
        self._replies: list[Reply] = list(replies)
        self._lock = threading.Lock()
        self.delay = delay
        self.fake_tau = tau
        self.prompts: list[str] = []
        self.requests: list[GenerateRequest] = []
        self.contexts: dict[str, str] = {}
        self.primed: list[str] = []  # prompts given to prime(), in order
        self.primes_saved: list[bool] = []  # ...and whether each was to be saved
        self.closed = False
        # replies are scripted in a family's wire format: Qwen's unless the test names another
        self._info = ModelInfo(name=name, path="<scripted>", n_ctx=n_ctx, arch="scripted", quant="none",
                               chat_template=chat_template, family=family)

    # -- scripting ---------------------------------------------------------------------
    def add_reply(self, reply: Reply) -> None:
        with self._lock:
            self._replies.append(reply)

    @property
    def remaining(self) -> int:
        return len(self._replies)

    # -- Engine protocol ---------------------------------------------------------------
    @property
    def info(self) -> ModelInfo:
        return self._info

    def count_tokens(self, text: str) -> int:
        return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN

    def chat_prompt(self, messages: Sequence[dict], tools: Sequence[dict] | None = None, add_generation_prompt: bool = True) -> str:
        return render_prompt(self._info, self._info.chat_template, messages, tools, add_generation_prompt)

    def register_context(self, key: str, text: str) -> None:
        self.contexts[key] = text

    def close(self) -> None:
        self.closed = True

    def prime(self, prompt: str, cancel: CancelToken | None = None, save: bool = True) -> int:
        if cancel is not None and cancel.cancelled:
            return 0
        with self._lock:
            self.primed.append(prompt)
            self.primes_saved.append(save)
        return self.count_tokens(prompt)

    def stream(self, request: GenerateRequest, cancel: CancelToken | None = None) -> Iterator[EngineEvent]:
        t0 = time.perf_counter()
        prompt = request.prompt if isinstance(request.prompt, str) else "".join(chr(t) for t in request.prompt)
        with self._lock:
            self.prompts.append(prompt)
            self.requests.append(request)
            reply = self._replies.pop(0) if self._replies else None
        n_prompt = self.count_tokens(prompt)
        if reply is None:
            stats = GenStats(prompt_tokens=n_prompt, wall_s=time.perf_counter() - t0)
            yield DoneEvent("", (), "error", stats, error="scripted engine has no reply left")
            return
        text = reply(prompt) if callable(reply) else reply
        # stop strings cut the reply like a real engine would
        finish = "stop"
        for s in request.stop:
            i = text.find(s)
            if i >= 0:
                text = text[:i]
        chunks = [text[i : i + CHARS_PER_TOKEN] for i in range(0, len(text), CHARS_PER_TOKEN)]
        if len(chunks) > request.max_tokens:
            chunks = chunks[: request.max_tokens]
            finish = "length"
        out: list[str] = []
        ids: list[int] = []
        last_stats = t0
        for i, chunk in enumerate(chunks):
            if cancel is not None and cancel.cancelled:
                finish = "cancelled"
                break
            if self.delay:
                time.sleep(self.delay)
            out.append(chunk)
            ids.append(i)
            yield TokenEvent(chunk, (i,))
            now = time.perf_counter()
            if now - last_stats > 0.2:
                last_stats = now
                yield StatsEvent(self._stats(n_prompt, len(ids), t0, now))
        stats = self._stats(n_prompt, len(ids), t0, time.perf_counter())
        yield StatsEvent(stats)
        yield DoneEvent("".join(out), tuple(ids), finish, stats)

    def _stats(self, n_prompt: int, n_out: int, t0: float, now: float) -> GenStats:
        wall = max(now - t0, 1e-6)
        passes = max(1, round(n_out / self.fake_tau)) if n_out else 0
        acc = max(0, n_out - passes)
        return GenStats(
            prompt_tokens=n_prompt,
            completion_tokens=n_out,
            prefill_s=wall * 0.1,
            decode_s=wall * 0.9,
            wall_s=wall,
            verify_passes=passes,
            drafted={"ngram": acc + passes},
            accepted={"ngram": acc},
            accept_by_pos=(0.8, 0.6, 0.4) if n_out else (),
            ceiling_tok_s=100.0,
        )
