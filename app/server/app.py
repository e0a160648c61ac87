"""The OpenAI-compatible HTTP app: ``create_app(engine, ...)`` -> a Starlette app.

Endpoints: ``/v1/models``, ``/v1/chat/completions``, ``/v1/completions`` (streaming SSE or
not), ``/health``, ``/metrics`` (Prometheus text) and tau's own ``/tau/v1/*`` (model info,
chat template, tokenizer, drafter context) that ``RemoteEngine`` uses when attached.

All generations share one engine through :class:`EngineWorker` (FIFO). A client that goes
away cancels its generation at once. Every completion carries the engine's stats in
``tau_stats`` (``GenStats.to_dict()``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.server import protocol as P
from app.server.metrics import Metrics
from app.server.toolcalls import ToolCallFilter, parse_tool_calls
from app.server.worker import EngineWorker, Job
from engine.types import DoneEvent, Engine, GenStats, ModelInfo, SamplingParams, StatsEvent, TokenEvent

log = logging.getLogger("tau.server")

DEFAULT_MAX_BODY = 8 * 1024 * 1024
API_VERSION = 1
_GONE = object()  # put into a job's queue when its client disconnects


LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def _hostname(netloc: str) -> str:
    """'127.0.0.1:8686' -> '127.0.0.1', '[::1]:80' -> '::1', 'Example.com' -> 'example.com'."""
    netloc = netloc.strip().lower().rsplit("@", 1)[-1]
    if netloc.startswith("["):
        return netloc[1:].split("]", 1)[0]
    return netloc.rsplit(":", 1)[0] if netloc.count(":") == 1 else netloc


def default_model_id(info: ModelInfo) -> str:
    """The id in /v1/models: the GGUF file's stem (no spaces, e.g. qwen2.5-coder-1.5b-instruct-q4_k_m)."""
    if info.path.lower().endswith(".gguf"):
        return os.path.basename(info.path)[: -len(".gguf")]
    return info.name


def _err(e: P.ApiError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if e.status == 401 else None
    return JSONResponse(e.body(), status_code=e.status, headers=headers)


class _Ctx:
    """Everything the handlers share."""

    def __init__(self, engine: Engine, api_key: str | None, model_name: str, max_body: int,
                 defaults: SamplingParams, keepalive_s: float) -> None:
        self.engine = engine
        self.api_key = api_key or None
        self.model_name = model_name
        self.aliases = {model_name, engine.info.name, default_model_id(engine.info), "tau"}
        self.max_body = max_body
        self.defaults = defaults
        self.keepalive_s = keepalive_s
        self.allowed_hosts: set[str] | None = None
        self.metrics = Metrics(model=model_name, backend=engine.info.backend, n_ctx=engine.info.n_ctx)
        self.worker = EngineWorker(engine, on_done=self._on_done)

    def _on_done(self, job: Job, done: DoneEvent) -> None:
        if job.started_at is not None:  # the engine ran it (not dropped from the queue)
            self.metrics.generation(done.finish_reason, done.stats)

    # -- request plumbing ----------------------------------------------------------------
    def check_origin(self, request: Request) -> None:
        if self.allowed_hosts is not None:
            host = _hostname(request.headers.get("host", ""))
            if host not in self.allowed_hosts:
                raise P.ApiError(403, f"Host '{host}' is not allowed; use http://127.0.0.1:PORT",
                                 type_="permission_error", code="host_not_allowed")
        origin = request.headers.get("origin")
        if origin and self.api_key is None and _hostname(urlsplit(origin).netloc) not in LOOPBACK_NAMES:
            raise P.ApiError(403, "cross-origin requests from web pages are refused (start tau serve with --api-key "
                             "to allow authenticated ones)", type_="permission_error", code="origin_not_allowed")

    def check_auth(self, request: Request) -> None:
        if self.api_key is None:
            return
        auth = request.headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), self.api_key.encode()):
            raise P.ApiError(401, "Incorrect or missing API key: send 'Authorization: Bearer <key>'.",
                             code="invalid_api_key")

    async def read_json(self, request: Request) -> dict:
        cl = request.headers.get("content-length")
        if cl is not None and cl.isdigit() and int(cl) > self.max_body:
            raise P.ApiError(413, f"request body of {cl} bytes exceeds the limit of {self.max_body} bytes",
                             code="request_too_large")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body:
                raise P.ApiError(413, f"request body exceeds the limit of {self.max_body} bytes",
                                 code="request_too_large")
            chunks.append(chunk)
        return P.parse_json_body(b"".join(chunks))

    def check_model(self, body: dict) -> None:
        model = body.get("model")
        if model is None or model == "":
            return
        if not isinstance(model, str) or model not in self.aliases:
            raise P.ApiError(404, f"The model '{model}' does not exist; this server runs '{self.model_name}'.",
                             code="model_not_found", param="model")

    async def admit(self, body: dict, prompt: str | tuple[int, ...]) -> tuple[Job, int]:
        n_prompt = len(prompt) if isinstance(prompt, tuple) else await run_in_threadpool(self.engine.count_tokens, prompt)
        req = P.generate_request(body, prompt, n_prompt, self.engine.info.n_ctx, self.defaults)
        return self.worker.submit(req), n_prompt


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            return


async def _collect(job: Job) -> DoneEvent:
    while True:
        ev = await job.events.get()
        if isinstance(ev, DoneEvent):
            return ev


async def _run_to_done(ctx: _Ctx, job: Job, request: Request) -> DoneEvent | None:
    """Wait for the job's DoneEvent; None (and the job cancelled) if the client went away first."""
    waiter = asyncio.ensure_future(_collect(job))
    watcher = asyncio.ensure_future(_wait_disconnect(request.receive))
    try:
        done, _ = await asyncio.wait({waiter, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if waiter in done:
            return waiter.result()
        job.cancel.cancel()
        ctx.metrics.disconnect()
        return None
    finally:
        for t in (waiter, watcher):
            if not t.done():
                t.cancel()
        if not job.finished.is_set():
            job.cancel.cancel()


class JobStream(Response):
    """An SSE answer bound to a job: the client's disconnect cancels the job at once."""

    def __init__(self, ctx: _Ctx, job: Job, body: AsyncIterator[bytes]) -> None:
        self.status_code = 200
        self.background = None
        self.ctx = ctx
        self.job = job
        self.chunks = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        job = self.job
        gone = asyncio.Event()

        async def watch() -> None:
            await _wait_disconnect(receive)
            gone.set()
            job.cancel.cancel()
            job.events.put_nowait(_GONE)  # type: ignore[arg-type]

        watcher = asyncio.ensure_future(watch())
        try:
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-cache"),
                (b"x-accel-buffering", b"no"),
            ]})
            async for chunk in self.chunks:
                if gone.is_set():
                    break
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if not gone.is_set():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            gone.set()
        finally:
            watcher.cancel()
            with contextlib.suppress(Exception):
                await self.chunks.aclose()  # type: ignore[attr-defined]
            if not job.finished.is_set():
                job.cancel.cancel()
            if gone.is_set():
                self.ctx.metrics.disconnect()


async def _events(ctx: _Ctx, job: Job) -> AsyncIterator[Any]:
    """The job's engine events; ``None`` for a keepalive tick; stops at DoneEvent or disconnect."""
    while True:
        try:
            # not asyncio.wait_for: on Python 3.11 it swallows a cancellation that lands as
            # get() completes, and a forced shutdown's cancel of a busy stream was lost
            async with asyncio.timeout(ctx.keepalive_s):
                ev = await job.events.get()
        except TimeoutError:
            yield None
            continue
        if ev is _GONE:
            return
        yield ev
        if isinstance(ev, DoneEvent):
            return


def _error_sse(done: DoneEvent) -> bytes:
    return P.sse({"error": {"message": done.error or "generation failed", "type": "server_error",
                            "param": None, "code": "engine_error"}})


def create_app(
    engine: Engine,
    *,
    api_key: str | None = None,
    model_name: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY,
    defaults: SamplingParams | None = None,
    tau_extensions: bool = True,
    keepalive_s: float = 5.0,
    allowed_hosts: Collection[str] | None = None,
) -> Starlette:
    """Build the server app around one engine (the caller keeps ownership of the engine).

    Browser protection: a request with an ``Origin`` from anywhere but loopback is refused
    unless an API key is set (a web page cannot then drive the model behind your back), and
    ``allowed_hosts`` (``tau serve`` on loopback passes the loopback names) refuses other
    ``Host`` headers, which defeats DNS rebinding.

    ``tau_extensions=False`` leaves out ``/tau/v1/*`` and the ``tau_*`` fields' consumers
    can detect, so the server looks like any OpenAI-compatible endpoint (used in tests).
    """
    ctx = _Ctx(engine, api_key, model_name or default_model_id(engine.info), max_body_bytes,
               defaults or SamplingParams(), keepalive_s)
    ctx.allowed_hosts = {h.lower().strip("[]") for h in allowed_hosts} if allowed_hosts is not None else None

    def endpoint(name: str, auth: bool = True) -> Callable[[Callable[[Request], Awaitable[Response]]],
                                                          Callable[[Request], Awaitable[Response]]]:
        def deco(fn: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
            async def handler(request: Request) -> Response:
                try:
                    ctx.check_origin(request)
                    if auth:
                        ctx.check_auth(request)
                    resp = await fn(request)
                except P.ApiError as e:
                    resp = _err(e)
                except Exception as e:  # never a crash, never a traceback to the client
                    log.exception("%s failed", name)
                    msg = str(e).splitlines()[0] if str(e) else type(e).__name__
                    resp = _err(P.ApiError(500, f"internal error: {msg}", type_="server_error"))
                ctx.metrics.request(name, resp.status_code)
                return resp

            return handler

        return deco

    # -- OpenAI endpoints ---------------------------------------------------------------
    @endpoint("models")
    async def models(request: Request) -> Response:
        info = engine.info
        return JSONResponse({"object": "list", "data": [{
            "id": ctx.model_name, "object": "model", "created": int(ctx.metrics.started), "owned_by": "tau",
            "meta": {"n_ctx": info.n_ctx, "path": info.path, "arch": info.arch, "quant": info.quant,
                     "draft": info.draft_name, "backend": info.backend},
        }]})

    @endpoint("chat")
    async def chat_completions(request: Request) -> Response:
        body = await ctx.read_json(request)
        ctx.check_model(body)
        messages = P.normalize_messages(body.get("messages"))
        tools = P.normalize_tools(body)
        stream = P.want_stream(body)
        prompt = await run_in_threadpool(engine.chat_prompt, messages, tools, True)
        job, n_prompt = await ctx.admit(body, prompt)
        cid, created = P.new_id("chatcmpl"), P.now()

        def chunk(delta: dict | None, finish: str | None = None, extra: dict | None = None) -> bytes:
            d: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk", "created": created,
                                 "model": ctx.model_name, "system_fingerprint": "tau",
                                 "choices": [] if delta is None else
                                 [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
            d.update(extra or {})
            return P.sse(d)

        if not stream:
            done = await _run_to_done(ctx, job, request)
            if done is None:
                return Response(status_code=499)
            if done.finish_reason == "error":
                raise P.ApiError(500, done.error or "generation failed", type_="server_error", code="engine_error")
            content, calls = (parse_tool_calls(done.text) if tools else (done.text, []))
            message: dict[str, Any] = {"role": "assistant", "content": content if (content or not calls) else None}
            if calls:
                message["tool_calls"] = P.tool_calls_payload(calls)
            return JSONResponse({
                "id": cid, "object": "chat.completion", "created": created, "model": ctx.model_name,
                "system_fingerprint": "tau",
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": "tool_calls" if calls else P.FINISH.get(done.finish_reason, "stop")}],
                "usage": P.usage(done.stats, n_prompt),
                "tau_stats": done.stats.to_dict(),
            })

        with_usage = P.include_usage(body)

        async def gen() -> AsyncIterator[bytes]:
            yield chunk({"role": "assistant", "content": ""})
            filt = ToolCallFilter() if tools else None
            pending: GenStats | None = None
            done: DoneEvent | None = None
            async for ev in _events(ctx, job):
                if ev is None:
                    yield b": keepalive\n\n"
                elif isinstance(ev, TokenEvent):
                    text = filt.feed(ev.text) if filt else ev.text
                    if text:
                        extra = {"tau_stats": pending.to_dict()} if pending is not None else {}
                        pending = None
                        yield chunk({"content": text}, extra=extra)
                elif isinstance(ev, StatsEvent):
                    pending = ev.stats
                elif isinstance(ev, DoneEvent):
                    done = ev
            if done is None:
                return
            if done.finish_reason == "error":
                yield _error_sse(done)
                yield P.sse("[DONE]")
                return
            calls: list = []
            if filt is not None:
                rest, calls = filt.finish()
                if rest:
                    yield chunk({"content": rest})
            if calls:
                yield chunk({"tool_calls": P.tool_calls_payload(calls, with_index=True)})
            finish = "tool_calls" if calls else P.FINISH.get(done.finish_reason, "stop")
            yield chunk({}, finish, {"tau_stats": done.stats.to_dict(), "tau_finish_reason": done.finish_reason})
            if with_usage:
                yield chunk(None, extra={"usage": P.usage(done.stats, n_prompt)})
            yield P.sse("[DONE]")

        return JobStream(ctx, job, gen())

    @endpoint("completions")
    async def completions(request: Request) -> Response:
        body = await ctx.read_json(request)
        ctx.check_model(body)
        prompt = P.prompt_of_completion(body)
        stream = P.want_stream(body)
        if body.get("echo"):
            raise P.ApiError(400, "'echo' is not supported", param="echo")
        with_ids = bool(body.get("tau_token_ids"))
        job, n_prompt = await ctx.admit(body, prompt)
        cid, created = P.new_id("cmpl"), P.now()

        def chunk(text: str | None, finish: str | None = None, extra: dict | None = None) -> bytes:
            d: dict[str, Any] = {"id": cid, "object": "text_completion", "created": created,
                                 "model": ctx.model_name, "system_fingerprint": "tau",
                                 "choices": [] if text is None else
                                 [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish}]}
            d.update(extra or {})
            return P.sse(d)

        if not stream:
            done = await _run_to_done(ctx, job, request)
            if done is None:
                return Response(status_code=499)
            if done.finish_reason == "error":
                raise P.ApiError(500, done.error or "generation failed", type_="server_error", code="engine_error")
            out: dict[str, Any] = {
                "id": cid, "object": "text_completion", "created": created, "model": ctx.model_name,
                "system_fingerprint": "tau",
                "choices": [{"index": 0, "text": done.text, "logprobs": None,
                             "finish_reason": P.FINISH.get(done.finish_reason, "stop")}],
                "usage": P.usage(done.stats, n_prompt),
                "tau_stats": done.stats.to_dict(),
                "tau_finish_reason": done.finish_reason,
            }
            if with_ids:
                out["tau_token_ids"] = list(done.token_ids)
            return JSONResponse(out)

        with_usage = P.include_usage(body)

        async def gen() -> AsyncIterator[bytes]:
            pending: GenStats | None = None
            done: DoneEvent | None = None
            async for ev in _events(ctx, job):
                if ev is None:
                    yield b": keepalive\n\n"
                elif isinstance(ev, TokenEvent):
                    stats = None
                    if pending is not None:
                        stats, pending = pending.to_dict(), None
                    extra: dict[str, Any] = {"tau_token_ids": list(ev.token_ids)} if with_ids else {}
                    if stats is not None:
                        extra["tau_stats"] = stats
                    yield chunk(ev.text, extra=extra)
                elif isinstance(ev, StatsEvent):
                    pending = ev.stats
                elif isinstance(ev, DoneEvent):
                    done = ev
            if done is None:
                return
            if done.finish_reason == "error":
                yield _error_sse(done)
                yield P.sse("[DONE]")
                return
            yield chunk("", P.FINISH.get(done.finish_reason, "stop"),
                        {"tau_stats": done.stats.to_dict(), "tau_finish_reason": done.finish_reason})
            if with_usage:
                yield chunk(None, extra={"usage": P.usage(done.stats, n_prompt)})
            yield P.sse("[DONE]")

        return JobStream(ctx, job, gen())

    # -- operations -----------------------------------------------------------------------
    @endpoint("health", auth=False)
    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "model": ctx.model_name, "pid": os.getpid(),
                             "queue_length": ctx.worker.queue_length, "busy": ctx.worker.running is not None})

    @endpoint("metrics", auth=False)
    async def metrics(request: Request) -> Response:
        ctx.metrics.queue_length = ctx.worker.waiting
        ctx.metrics.busy = 1 if ctx.worker.running is not None else 0
        return PlainTextResponse(ctx.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    # -- tau's own API (used by RemoteEngine when attached) --------------------------------
    @endpoint("tau_info")
    async def tau_info(request: Request) -> Response:
        info = engine.info
        return JSONResponse({"api_version": API_VERSION, "model_id": ctx.model_name, "pid": os.getpid(),
                             "name": info.name, "path": info.path, "n_ctx": info.n_ctx, "arch": info.arch,
                             "quant": info.quant, "size_bytes": info.size_bytes, "draft_name": info.draft_name,
                             "backend": info.backend})

    @endpoint("tau_template")
    async def tau_template(request: Request) -> Response:
        body = await ctx.read_json(request)
        messages = P.normalize_messages(body.get("messages"))
        tools = P.normalize_tools(body)
        agp = body.get("add_generation_prompt", True)
        prompt = await run_in_threadpool(engine.chat_prompt, messages, tools, bool(agp))
        return JSONResponse({"prompt": prompt})

    @endpoint("tau_tokenize")
    async def tau_tokenize(request: Request) -> Response:
        body = await ctx.read_json(request)
        text = body.get("text")
        if not isinstance(text, str):
            raise P.ApiError(400, "'text' must be a string", param="text")
        return JSONResponse({"count": await run_in_threadpool(engine.count_tokens, text)})

    @endpoint("tau_context")
    async def tau_context(request: Request) -> Response:
        body = await ctx.read_json(request)
        key, text = body.get("key"), body.get("text")
        if not isinstance(key, str) or not isinstance(text, str):
            raise P.ApiError(400, "'key' and 'text' must be strings")
        await run_in_threadpool(engine.register_context, key, text)
        return JSONResponse({"ok": True})

    routes = [
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/completions", completions, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]
    if tau_extensions:
        routes += [
            Route("/tau/v1/info", tau_info, methods=["GET"]),
            Route("/tau/v1/template", tau_template, methods=["POST"]),
            Route("/tau/v1/tokenize", tau_tokenize, methods=["POST"]),
            Route("/tau/v1/context", tau_context, methods=["POST"]),
        ]

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
        msg = f"{request.method} {request.url.path}: {detail}"
        return _err(P.ApiError(status, msg, type_="invalid_request_error" if status < 500 else "server_error"))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await run_in_threadpool(ctx.worker.close)

    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error}, lifespan=lifespan)
    app.state.ctx = ctx
    app.state.worker = ctx.worker
    app.state.metrics = ctx.metrics
    return app
