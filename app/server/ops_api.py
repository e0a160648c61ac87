"""Operations endpoints: /health (liveness, no key needed) and /metrics (Prometheus text)."""

from __future__ import annotations

import os

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from app.server.context import ServerContext


async def health(ctx: ServerContext, request: Request) -> Response:
    return JSONResponse({"status": "ok", "model": ctx.model_name, "pid": os.getpid(),
                         "queue_length": ctx.worker.queue_length, "busy": ctx.worker.running is not None})


async def metrics(ctx: ServerContext, request: Request) -> Response:
    ctx.metrics.queue_length = ctx.worker.waiting
    ctx.metrics.busy = 1 if ctx.worker.running is not None else 0
    return PlainTextResponse(ctx.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")
