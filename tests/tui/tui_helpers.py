"""Helpers of the TUI tests: scripted tool calls, an engine with frozen stats."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Sequence

from app.config import Config
from engine.scripted import ScriptedEngine
from engine.types import CancelToken, EngineEvent, GenerateRequest, GenStats, StatsEvent, TokenEvent


def tool_call(name: str, **arguments: object) -> str:
    """A Qwen-style tool call as the model writes it."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


FROZEN = GenStats(
    prompt_tokens=1834,
    completion_tokens=96,
    prefill_s=0.21,
    decode_s=1.5,
    wall_s=1.8,
    verify_passes=32,
    drafted={"ngram": 70, "draft": 40},
    accepted={"ngram": 46, "draft": 18},
    accept_by_pos=(0.92, 0.81, 0.66, 0.48, 0.3, 0.17),
    ceiling_tok_s=160.0,
)


class FrozenEngine(ScriptedEngine):
    """A ScriptedEngine whose stats are fixed, and which can pause mid-reply (a 'gate').

    With ``pause_after`` set, the ``pause_call``-th stream (default: the last reply) stops
    after that many chunks until ``gate`` is set (or the generation is cancelled): the
    screen is then frozen 'during generation'.
    """

    def __init__(
        self, replies: Sequence[str], *, pause_after: int | None = None, pause_call: int = -1, **kw: object
    ) -> None:
        super().__init__(replies, name="qwen2.5-coder-1.5b", **kw)  # type: ignore[arg-type]
        self._info = type(self._info)(
            name="qwen2.5-coder-1.5b", path="<scripted>", n_ctx=16384, arch="qwen2", quant="Q4_K_M",
            draft_name="qwen2.5-coder-0.5b",
        )
        self.pause_after = pause_after
        self.pause_call = pause_call if pause_call >= 0 else len(replies) - 1  # which stream() call pauses
        self.calls = 0
        self.gate = threading.Event()
        self.paused = threading.Event()

    def _stats(self, n_prompt: int, n_out: int, t0: float, now: float) -> GenStats:
        return FROZEN

    def stream(self, request: GenerateRequest, cancel: CancelToken | None = None) -> Iterator[EngineEvent]:
        n = 0
        call = self.calls
        self.calls += 1
        for ev in super().stream(request, cancel):
            if isinstance(ev, StatsEvent):
                continue  # only the one below: the status bar shows FROZEN, independent of timing
            yield ev
            if isinstance(ev, TokenEvent):
                n += 1
                if n == 1:
                    yield StatsEvent(FROZEN)
                if self.pause_after is not None and n == self.pause_after and call == self.pause_call:
                    self.paused.set()
                    while not self.gate.wait(0.02):
                        if cancel is not None and cancel.cancelled:
                            break


def wait_until(cond, timeout: float = 10.0) -> bool:
    """Poll ``cond`` from a test's thread until it holds (True) or ``timeout`` seconds pass (False)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def make_config(**kw: object) -> Config:
    return Config().with_overrides(**kw)


# Pilot helpers: type a line into the prompt and submit it; wait for a condition.
async def send(pilot, text: str) -> None:
    pilot.app.query_one("#prompt").load_text(text)
    await pilot.press("enter")


async def until(pilot, cond, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)
