"""The OpenAI endpoints: /v1/models, /v1/chat/completions and /v1/completions."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.server import protocol as P
from app.server.completion import ChatShape, TextShape, complete
from app.server.context import ServerContext
from app.wire import wire_for


async def models(ctx: ServerContext, request: Request) -> Response:
    info = ctx.engine.info
    return JSONResponse({"object": "list", "data": [{
        "id": ctx.model_name, "object": "model", "created": int(ctx.metrics.started), "owned_by": "tau",
        "meta": {"n_ctx": info.n_ctx, "path": info.path, "arch": info.arch, "quant": info.quant,
                 "draft": info.draft_name, "backend": info.backend, "family": wire_for(info).name},
    }]})


async def chat_completions(ctx: ServerContext, request: Request) -> Response:
    body = await ctx.read_json(request)
    ctx.check_model(body)
    messages = P.normalize_messages(body.get("messages"))
    tools = P.normalize_tools(body)
    stream = P.want_stream(body)
    prompt = await ctx.chat_prompt(messages, tools, True)
    return await complete(ctx, request, body, prompt, ChatShape(tools, wire_for(ctx.engine.info)), stream)


async def completions(ctx: ServerContext, request: Request) -> Response:
    body = await ctx.read_json(request)
    ctx.check_model(body)
    prompt = P.prompt_of_completion(body, ctx.engine.info.n_vocab)
    stream = P.want_stream(body)
    if body.get("echo"):
        raise P.ApiError(400, "'echo' is not supported", param="echo")
    return await complete(ctx, request, body, prompt, TextShape(bool(body.get("tau_token_ids"))), stream)
