"""What every handler shares: the engine and its worker, and the checks each request passes
(Host and Origin, the API key, the body's size and deadline, the model name)."""

from __future__ import annotations

import asyncio
import hmac
import os
from collections.abc import AsyncIterator, Callable, Collection
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from app.server import protocol as P
from app.server.metrics import Metrics
from app.server.requestlog import done_line, start_line
from app.server.worker import EngineWorker, Job
from engine.types import DoneEvent, Engine, ModelInfo, SamplingParams

DEFAULT_MAX_BODY = 8 * 1024 * 1024
# A refused body is still read (and dropped) up to this much more, for at most DRAIN_S: a client
# still sending when the server answered 413 and hung up got a connection reset, not the answer.
DRAIN_BYTES = 1024 * 1024
DRAIN_S = 2.0


async def _drain(source: Request | AsyncIterator[bytes], limit: int) -> None:
    """Read and drop up to ``limit`` bytes of what is left of a request body."""
    stream = source.stream() if isinstance(source, Request) else source
    seen = 0
    try:
        async with asyncio.timeout(DRAIN_S):
            async for chunk in stream:
                seen += len(chunk)
                if seen > limit:
                    return
    except Exception:  # best effort: a client that hangs up or stalls gets the 413 as it can
        return
DEFAULT_BODY_TIMEOUT_S = 30.0  # a client that has not sent its whole body by then holds a connection for nothing
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


class ServerContext:
    """The engine, its FIFO worker, the metrics and the request checks."""

    def __init__(self, engine: Engine, *, api_key: str | None, model_name: str, max_body: int,
                 defaults: SamplingParams, keepalive_s: float, body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
                 strict_model: bool = False, allowed_hosts: Collection[str] | None = None,
                 default_max_tokens: int | None = None, request_log: Callable[[str], None] | None = None,
                 loop_stop: bool = True) -> None:
        self.engine = engine
        self.request_log = request_log
        self.api_key = api_key or None
        self.model_name = model_name
        self.aliases = {model_name, engine.info.name, default_model_id(engine.info), "tau"}
        self.strict_model = strict_model
        self.max_body = max_body
        self.body_timeout_s = body_timeout_s
        self.defaults = defaults
        self.default_max_tokens = default_max_tokens
        self.keepalive_s = keepalive_s
        self.allowed_hosts = {h.lower().strip("[]") for h in allowed_hosts} if allowed_hosts is not None else None
        self.metrics = Metrics(model=model_name, backend=engine.info.backend, n_ctx=engine.info.n_ctx)
        self.worker = EngineWorker(engine, on_done=self._on_done, on_start=self._on_start, loop_stop=loop_stop)

    def _on_start(self, job: Job) -> None:
        if self.request_log is not None:
            self.request_log(start_line(job))

    def _on_done(self, job: Job, done: DoneEvent) -> None:
        if job.started_at is not None:  # the engine ran it (not dropped from the queue)
            self.metrics.generation(done.finish_reason, done.stats)
        if self.request_log is not None:
            self.request_log(done_line(job, done))

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
            too_large = P.ApiError(413, f"request body of {cl[:20]} bytes exceeds the limit of {self.max_body} bytes",
                                   code="request_too_large")
            if int(cl) <= self.max_body + DRAIN_BYTES:
                await _drain(request, DRAIN_BYTES + self.max_body)
            raise too_large
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.body_timeout_s):
                stream = request.stream()
                async for chunk in stream:
                    size += len(chunk)
                    if size > self.max_body:
                        await _drain(stream, DRAIN_BYTES)
                        raise P.ApiError(413, f"request body exceeds the limit of {self.max_body} bytes",
                                         code="request_too_large")
                    chunks.append(chunk)
        except TimeoutError:
            raise P.ApiError(408, f"the request body did not arrive within {self.body_timeout_s:g} s",
                             code="request_timeout") from None
        return P.parse_json_body(b"".join(chunks))

    def check_model(self, body: dict) -> None:
        """Any name gets the resident model (as llama-server does); ``strict_model`` refuses unknown ones."""
        model = body.get("model")
        if model is None or model == "":
            return
        if not isinstance(model, str):
            raise P.ApiError(400, "'model' must be a string", param="model")
        if self.strict_model and model not in self.aliases:
            raise P.ApiError(404, f"The model '{model[:200]}' does not exist; this server runs '{self.model_name}'.",
                             code="model_not_found", param="model")

    async def chat_prompt(self, messages: list[dict], tools: list[dict] | None, add_generation_prompt: bool) -> str:
        """The messages in the model's chat template; a template that rejects them is the client's 400."""
        try:
            return await run_in_threadpool(self.engine.chat_prompt, messages, tools, add_generation_prompt)
        except Exception as e:  # jinja's TemplateError, a template's raise_exception, odd fields
            first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
            raise P.ApiError(400, f"the messages cannot be rendered with the model's chat template: {first}",
                             param="messages") from None

    async def admit(self, body: dict, prompt: str | tuple[int, ...]) -> tuple[Job, int]:
        n_prompt = len(prompt) if isinstance(prompt, tuple) else await run_in_threadpool(self.engine.count_tokens, prompt)
        req = P.generate_request(body, prompt, n_prompt, self.engine.info.n_ctx, self.defaults, self.default_max_tokens)
        return self.worker.submit(req, n_prompt=n_prompt), n_prompt
