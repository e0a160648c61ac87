"""A job's events on the wire: waiting for the result (cancelled when the client goes away),
and the SSE response bound to a job."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from app.server import protocol as P
from app.server.context import ServerContext
from app.server.worker import Job
from engine.types import DoneEvent

log = logging.getLogger("tau.server")
_GONE = object()  # put into a job's queue when its client disconnects


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


async def run_to_done(ctx: ServerContext, job: Job, request: Request) -> DoneEvent | None:
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

    def __init__(self, ctx: ServerContext, job: Job, body: AsyncIterator[bytes]) -> None:
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
        except Exception as e:  # a bug mid-stream: the client gets an error event, not a cut connection
            log.exception("stream failed")
            if not gone.is_set():
                first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
                with contextlib.suppress(Exception):
                    await send({"type": "http.response.body", "more_body": False, "body": P.sse(
                        {"error": {"message": f"internal error: {first}", "type": "server_error", "param": None,
                                   "code": "stream_error"}}) + P.sse("[DONE]")})
        finally:
            watcher.cancel()
            with contextlib.suppress(Exception):
                await self.chunks.aclose()  # type: ignore[attr-defined]
            if not job.finished.is_set():
                job.cancel.cancel()
            if gone.is_set():
                self.ctx.metrics.disconnect()


async def events(ctx: ServerContext, job: Job) -> AsyncIterator[Any]:
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


def error_sse(done: DoneEvent) -> bytes:
    return P.sse({"error": {"message": done.error or "generation failed", "type": "server_error",
                            "param": None, "code": "engine_error"}})
