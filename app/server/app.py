"""The OpenAI-compatible HTTP app: ``create_app(engine, ...)`` -> a Starlette app.

Endpoints: ``/v1/models``, ``/v1/chat/completions``, ``/v1/completions`` (streaming SSE or
not; app/server/openai_api.py), ``/health``, ``/metrics`` (ops_api.py) and tau's own
``/tau/v1/*`` (model info, chat template, tokenizer, drafter context; tau_api.py) that
``RemoteEngine`` uses when attached.

All generations share one engine through :class:`EngineWorker` (FIFO). A client that goes
away cancels its generation at once. Every completion carries the engine's stats in
``tau_stats`` (``GenStats.to_dict()``). Every answer to bad input is a JSON error; an
unexpected failure is a JSON 500 with one line, never a traceback.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.server import openai_api, ops_api, tau_api
from app.server import protocol as P
from app.server.context import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_MAX_BODY,
    LOOPBACK_NAMES,
    ServerContext,
    default_model_id,
)
from engine.types import Engine, SamplingParams

__all__ = ["DEFAULT_MAX_BODY", "LOOPBACK_NAMES", "create_app", "default_model_id"]

log = logging.getLogger("tau.server")

Handler = Callable[[ServerContext, Request], Awaitable[Response]]


def _err(e: P.ApiError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if e.status == 401 else {}
    if e.status in (408, 413):  # the rest of the body may never come, or is not worth reading: hang up
        headers["Connection"] = "close"
    return JSONResponse(e.body(), status_code=e.status, headers=headers or None)


def _endpoint(ctx: ServerContext, name: str, fn: Handler, auth: bool = True) -> Callable[[Request], Awaitable[Response]]:
    """``fn`` behind the Host/Origin and key checks, its errors turned into JSON answers."""

    async def handler(request: Request) -> Response:
        try:
            ctx.check_origin(request)
            if auth:
                ctx.check_auth(request)
            resp = await fn(ctx, request)
        except P.ApiError as e:
            resp = _err(e)
        except RecursionError:  # input nested past what the code below the checks can walk
            resp = _err(P.ApiError(400, "request is nested too deeply"))
        except Exception as e:  # never a crash, never a traceback to the client
            log.exception("%s failed", name)
            msg = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
            resp = _err(P.ApiError(500, f"internal error: {msg}", type_="server_error"))
        ctx.metrics.request(name, resp.status_code)
        return resp

    return handler


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
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
    strict_model: bool = False,
    default_max_tokens: int | None = None,
    request_log: Callable[[str], None] | None = None,
    loop_stop: bool = True,
) -> Starlette:
    """Build the server app around one engine (the caller keeps ownership of the engine).

    Browser protection: a request with an ``Origin`` from anywhere but loopback is refused
    unless an API key is set (a web page cannot then drive the model behind your back), and
    ``allowed_hosts`` (``tau serve`` on loopback passes the loopback names) refuses other
    ``Host`` headers, which defeats DNS rebinding.

    Any model name gets the resident model and the answer names the served id;
    ``strict_model`` answers 404 for a name that is not one of its aliases instead.
    A body not received within ``body_timeout_s`` gets 408. A request that sets no max_tokens
    generates up to ``default_max_tokens`` (None: the rest of the context). ``request_log`` gets a
    line as the engine takes each request and one as it ends (``app.server.requestlog``). ``loop_stop``:
    a reply caught in a loop (``app.loopwatch``) stops at once, kept up to its first copy.

    ``tau_extensions=False`` leaves out ``/tau/v1/*`` and the ``tau_*`` fields' consumers
    can detect, so the server looks like any OpenAI-compatible endpoint (used in tests).
    """
    ctx = ServerContext(engine, api_key=api_key, model_name=model_name or default_model_id(engine.info),
                        max_body=max_body_bytes, defaults=defaults or SamplingParams(), keepalive_s=keepalive_s,
                        body_timeout_s=body_timeout_s, strict_model=strict_model, allowed_hosts=allowed_hosts,
                        default_max_tokens=default_max_tokens, request_log=request_log, loop_stop=loop_stop)

    def route(path: str, name: str, fn: Handler, method: str, auth: bool = True) -> Route:
        return Route(path, _endpoint(ctx, name, fn, auth), methods=[method])

    routes = [
        route("/v1/models", "models", openai_api.models, "GET"),
        route("/v1/chat/completions", "chat", openai_api.chat_completions, "POST"),
        route("/v1/completions", "completions", openai_api.completions, "POST"),
        route("/health", "health", ops_api.health, "GET", auth=False),
        route("/metrics", "metrics", ops_api.metrics, "GET", auth=False),
    ]
    if tau_extensions:
        routes += [
            route("/tau/v1/info", "tau_info", tau_api.info, "GET"),
            route("/tau/v1/template", "tau_template", tau_api.template, "POST"),
            route("/tau/v1/tokenize", "tau_tokenize", tau_api.tokenize, "POST"),
            route("/tau/v1/context", "tau_context", tau_api.context, "POST"),
            route("/tau/v1/prime", "tau_prime", tau_api.prime, "POST"),
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
