"""tau's own endpoints under /tau/v1 (model info, chat template, tokenizer, drafter context, prime),
used by RemoteEngine when a tau front end attaches to ``tau serve``."""

from __future__ import annotations

import os

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.server import protocol as P
from app.server.context import ServerContext
from app.wire import wire_for
from engine.types import prime as engine_prime

API_VERSION = 1
MAX_CONTEXT_KEY_CHARS = 512
MAX_CONTEXT_TEXT_CHARS = 1024 * 1024  # one registered text; the drafter bounds their number and total


async def info(ctx: ServerContext, request: Request) -> Response:
    i = ctx.engine.info
    return JSONResponse({"api_version": API_VERSION, "model_id": ctx.model_name, "pid": os.getpid(),
                         "name": i.name, "path": i.path, "n_ctx": i.n_ctx, "arch": i.arch,
                         "quant": i.quant, "size_bytes": i.size_bytes, "draft_name": i.draft_name,
                         "backend": i.backend, "family": wire_for(i).name})


async def template(ctx: ServerContext, request: Request) -> Response:
    body = await ctx.read_json(request)
    messages = P.normalize_messages(body.get("messages"))
    tools = P.normalize_tools(body)
    agp = body.get("add_generation_prompt", True)
    return JSONResponse({"prompt": await ctx.chat_prompt(messages, tools, bool(agp))})


async def tokenize(ctx: ServerContext, request: Request) -> Response:
    body = await ctx.read_json(request)
    text = body.get("text")
    if not isinstance(text, str):
        raise P.ApiError(400, "'text' must be a string", param="text")
    return JSONResponse({"count": await run_in_threadpool(ctx.engine.count_tokens, text)})


async def context(ctx: ServerContext, request: Request) -> Response:
    body = await ctx.read_json(request)
    key, text = body.get("key"), body.get("text")
    if not isinstance(key, str) or not isinstance(text, str):
        raise P.ApiError(400, "'key' and 'text' must be strings")
    if not key or len(key) > MAX_CONTEXT_KEY_CHARS:
        raise P.ApiError(400, f"'key' must be 1 to {MAX_CONTEXT_KEY_CHARS} characters", param="key")
    if len(text) > MAX_CONTEXT_TEXT_CHARS:
        raise P.ApiError(413, f"'text' of {len(text)} characters exceeds the limit of {MAX_CONTEXT_TEXT_CHARS}",
                         code="request_too_large", param="text")
    await run_in_threadpool(ctx.engine.register_context, key, text)
    return JSONResponse({"ok": True})


async def prime(ctx: ServerContext, request: Request) -> Response:
    """Compute a prompt's KV cache now: an attached TUI sends its conversation while its user types."""
    body = await ctx.read_json(request)
    text, save = body.get("prompt"), body.get("save", True)
    if not isinstance(text, str):
        raise P.ApiError(400, "'prompt' must be a string", param="prompt")
    if not isinstance(save, bool):
        raise P.ApiError(400, "'save' must be true or false", param="save")
    return JSONResponse({"computed": await run_in_threadpool(engine_prime, ctx.engine, text, None, save)})
