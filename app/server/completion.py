"""The one path shared by /v1/chat/completions and /v1/completions: admit the job, then answer
with one JSON body or an SSE stream. A ``Shape`` says what differs: a chat turn's delta and
tool calls, or a text completion's text and token ids."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.server import protocol as P
from app.server.context import ServerContext
from app.server.streaming import JobStream, error_sse, events, run_to_done
from app.server.toolcalls import ToolCallFilter, parse_tool_calls
from app.wire import GENERIC, Wire
from engine.types import DoneEvent, GenStats, StatsEvent, TokenEvent


class Shape(Protocol):
    object: str  # of the whole answer
    chunk_object: str  # of a streamed chunk
    id_prefix: str

    def choice(self, payload: Any, finish: str | None) -> dict: ...
    def opening(self) -> list[Any]: ...  # payloads streamed before the first token
    def piece(self, ev: TokenEvent) -> tuple[Any, dict] | None: ...  # a token's payload and extra fields
    def closing(self) -> tuple[list[Any], bool]: ...  # payloads after the last token; whether tool calls ended it
    def end_payload(self) -> Any: ...
    def whole(self, done: DoneEvent) -> tuple[dict, dict]: ...  # the non-streamed choice and extra fields


class ChatShape:
    object, chunk_object, id_prefix = "chat.completion", "chat.completion.chunk", "chatcmpl"

    def __init__(self, tools: Sequence[dict] | None, wire: Wire = GENERIC) -> None:
        self.tools, self.wire = tools, wire  # calls parsed as the agent parses them (app.wire)
        self.filt = ToolCallFilter(tools, wire) if tools else None

    def choice(self, payload: Any, finish: str | None) -> dict:
        return {"index": 0, "delta": payload, "logprobs": None, "finish_reason": finish}

    def opening(self) -> list[Any]:
        return [{"role": "assistant", "content": ""}]

    def piece(self, ev: TokenEvent) -> tuple[Any, dict] | None:
        text = self.filt.feed(ev.text) if self.filt else ev.text
        return ({"content": text}, {}) if text else None

    def closing(self) -> tuple[list[Any], bool]:
        if self.filt is None:
            return [], False
        rest, calls = self.filt.finish()
        out: list[Any] = [{"content": rest}] if rest else []
        if calls:
            out.append({"tool_calls": P.tool_calls_payload(calls, with_index=True)})
        return out, bool(calls)

    def end_payload(self) -> Any:
        return {}

    def whole(self, done: DoneEvent) -> tuple[dict, dict]:
        content, calls = parse_tool_calls(done.text, self.tools, self.wire) if self.tools else (done.text, [])
        message: dict[str, Any] = {"role": "assistant", "content": content if (content or not calls) else None}
        if calls:
            message["tool_calls"] = P.tool_calls_payload(calls)
        finish = "tool_calls" if calls else P.FINISH.get(done.finish_reason, "stop")
        return {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}, {}


class TextShape:
    object, chunk_object, id_prefix = "text_completion", "text_completion", "cmpl"

    def __init__(self, with_ids: bool) -> None:
        self.with_ids = with_ids

    def choice(self, payload: Any, finish: str | None) -> dict:
        return {"index": 0, "text": payload, "logprobs": None, "finish_reason": finish}

    def opening(self) -> list[Any]:
        return []

    def piece(self, ev: TokenEvent) -> tuple[Any, dict] | None:
        return ev.text, ({"tau_token_ids": list(ev.token_ids)} if self.with_ids else {})

    def closing(self) -> tuple[list[Any], bool]:
        return [], False

    def end_payload(self) -> Any:
        return ""

    def whole(self, done: DoneEvent) -> tuple[dict, dict]:
        extra: dict[str, Any] = {"tau_finish_reason": done.finish_reason}
        if self.with_ids:
            extra["tau_token_ids"] = list(done.token_ids)
        choice = {"index": 0, "text": done.text, "logprobs": None, "finish_reason": P.FINISH.get(done.finish_reason, "stop")}
        return choice, extra


async def complete(ctx: ServerContext, request: Request, body: dict, prompt: str | tuple[int, ...],
                   shape: Shape, stream: bool) -> Response:
    """Run ``prompt`` through the shared engine and answer in ``shape``, streamed or whole."""
    job, n_prompt = await ctx.admit(body, prompt)
    cid, created, model = P.new_id(shape.id_prefix), P.now(), ctx.model_name

    def chunk(payload: Any, finish: str | None = None, extra: dict | None = None) -> bytes:
        d: dict[str, Any] = {"id": cid, "object": shape.chunk_object, "created": created, "model": model,
                             "system_fingerprint": "tau",
                             "choices": [] if payload is None else [shape.choice(payload, finish)]}
        d.update(extra or {})
        return P.sse(d)

    if not stream:
        done = await run_to_done(ctx, job, request)
        if done is None:
            return Response(status_code=499)
        if done.finish_reason == "error":
            raise P.ApiError(500, done.error or "generation failed", type_="server_error", code="engine_error")
        choice, extra = shape.whole(done)
        return JSONResponse({
            "id": cid, "object": shape.object, "created": created, "model": model, "system_fingerprint": "tau",
            "choices": [choice], "usage": P.usage(done.stats, n_prompt), "tau_stats": done.stats.to_dict(), **extra,
        })

    with_usage = P.include_usage(body)

    async def gen() -> AsyncIterator[bytes]:
        for payload in shape.opening():
            yield chunk(payload)
        pending: GenStats | None = None
        done: DoneEvent | None = None
        async for ev in events(ctx, job):
            if ev is None:
                yield b": keepalive\n\n"
            elif isinstance(ev, TokenEvent):
                piece = shape.piece(ev)
                if piece is not None:
                    payload, extra = piece
                    if pending is not None:
                        extra, pending = {**extra, "tau_stats": pending.to_dict()}, None
                    yield chunk(payload, extra=extra)
            elif isinstance(ev, StatsEvent):
                pending = ev.stats
            elif isinstance(ev, DoneEvent):
                done = ev
        if done is None:
            return
        if done.finish_reason == "error":
            yield error_sse(done)
            yield P.sse("[DONE]")
            return
        tail, called = shape.closing()
        for payload in tail:
            yield chunk(payload)
        finish = "tool_calls" if called else P.FINISH.get(done.finish_reason, "stop")
        yield chunk(shape.end_payload(), finish,
                    {"tau_stats": done.stats.to_dict(), "tau_finish_reason": done.finish_reason})
        if with_usage:
            yield chunk(None, extra={"usage": P.usage(done.stats, n_prompt)})
        yield P.sse("[DONE]")

    return JobStream(ctx, job, gen())
