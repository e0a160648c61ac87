"""Summarize old conversation through the engine, to free context (``/compact`` and the budget)."""

from __future__ import annotations

import json
from collections.abc import Callable

from app.agent.budget import cut_middle
from app.agent.prompts import SUMMARY_SYSTEM
from app.wire import wire_for
from engine.types import CancelToken, DoneEvent, Engine, GenerateRequest, SamplingParams

SUMMARY_TOKENS = 512


def transcript(messages: list[dict]) -> str:
    """Messages as plain text, tool calls shown as ``[called name {args}]``."""
    lines = []
    for m in messages:
        text = str(m.get("content") or "")
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function", tc)
            text += f"\n[called {fn.get('name')} {json.dumps(fn.get('arguments'))[:300]}]"
        lines.append(f"{m.get('role')}: {text}")
    return "\n\n".join(lines)


def summarize(
    engine: Engine, messages: list[dict], count: Callable[[str], int], cancel: CancelToken | None = None
) -> str:
    """A short bullet summary of ``messages``; the request always fits the context window."""
    text = transcript(messages)
    room = engine.info.n_ctx - SUMMARY_TOKENS - 64
    while True:
        prompt = engine.chat_prompt([{"role": "system", "content": SUMMARY_SYSTEM}, {"role": "user", "content": text}])
        if count(prompt) <= room or len(text) < 200:
            break
        text = cut_middle(text, len(text) * 2 // 3)
    req = GenerateRequest(prompt, max_tokens=SUMMARY_TOKENS, sampling=SamplingParams(temperature=0.0),
                          stop=wire_for(engine.info).stop)
    done: DoneEvent | None = None
    for ev in engine.stream(req, cancel):
        if isinstance(ev, DoneEvent):
            done = ev
    if done is None or done.finish_reason in ("error", "cancelled"):
        raise RuntimeError(done.error or done.finish_reason if done else "no result")
    return done.text
