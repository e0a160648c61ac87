"""RemoteEngine: the Engine protocol over HTTP, against ``tau serve`` or any OpenAI-compatible server.

Against a tau server (detected by ``/tau/v1/info``) it sends the raw templated prompt to
``/v1/completions`` (the server applies nothing), streams SSE, and reads tau's own stats
(``tau_stats``), token ids and finish reason from the extra fields, so a run attached to a
server behaves like one in-process. The chat template, the tokenizer and the drafter's
context come from the server's ``/tau/v1/template``, ``/tau/v1/tokenize`` and ``/tau/v1/context``.

Against a foreign endpoint (llama-server, vLLM, Ollama, OpenAI, ...) it uses
``/v1/chat/completions`` so the server applies its model's own template: the messages that
``chat_prompt`` rendered are remembered and sent as they were (with ``tools``); a prompt
it did not render is parsed back from ChatML, and a prompt that is not ChatML goes to
``/v1/completions`` as is. Structured ``tool_calls`` in the answer are turned back into
``<tool_call>{json}</tool_call>`` text, the form the agent loop parses. Server speed
figures (``usage``, llama-server's ``timings``) go into GenStats where the server gives them.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import httpx

from engine.chat_template import render_chatml
from engine.types import (
    CancelToken,
    DoneEvent,
    EngineEvent,
    GenerateRequest,
    GenStats,
    ModelInfo,
    StatsEvent,
    TokenEvent,
)

_CHATML = re.compile(r"<\|im_start\|>(\w+)\n(.*?)<\|im_end\|>\n?", re.S)
_GEN_PROMPT = "<|im_start|>assistant\n"
STATS_EVERY_S = 0.25


class RemoteEngineError(RuntimeError):
    """The endpoint cannot be used (unreachable, refused the key, no model); one line."""


def _root_of(url: str) -> str:
    url = url.strip().rstrip("/")
    if not re.match(r"^https?://", url):
        url = "http://" + url
    for suffix in ("/chat/completions", "/completions", "/v1"):
        if url.endswith(suffix):
            url = url[: -len(suffix)]
    return url.rstrip("/")


def _error_text(resp: httpx.Response) -> str:
    try:
        data = resp.json()
        err = data.get("error", data) if isinstance(data, dict) else data
        msg = err.get("message") if isinstance(err, dict) else err
        return f"HTTP {resp.status_code}: {msg}"
    except Exception:
        return f"HTTP {resp.status_code}: {resp.text[:200].strip()}"


def stats_from_dict(d: dict) -> GenStats:
    """GenStats from ``GenStats.to_dict()`` output (derived rates are recomputed)."""

    def num(k: str, cast: type = float) -> Any:
        v = d.get(k, 0)
        try:
            return cast(v)
        except (TypeError, ValueError):
            return cast(0)

    return GenStats(
        prompt_tokens=num("prompt_tokens", int),
        reused_tokens=num("reused_tokens", int),
        completion_tokens=num("completion_tokens", int),
        prefill_s=num("prefill_s"),
        decode_s=num("decode_s"),
        wall_s=num("wall_s"),
        verify_passes=num("verify_passes", int),
        drafted={str(k): int(v) for k, v in (d.get("drafted") or {}).items()},
        accepted={str(k): int(v) for k, v in (d.get("accepted") or {}).items()},
        accept_by_pos=tuple(float(x) for x in (d.get("accept_by_pos") or ())),
        ceiling_tok_s=num("ceiling_tok_s"),
        near_tie_divergences=num("near_tie_divergences", int),
    )


def parse_chatml(prompt: str) -> list[dict] | None:
    """Messages back from a ChatML prompt that ends with the assistant generation prompt."""
    if not prompt.endswith(_GEN_PROMPT):
        return None
    body = prompt[: -len(_GEN_PROMPT)]
    msgs: list[dict] = []
    pos = 0
    for m in _CHATML.finditer(body):
        if body[pos : m.start()].strip():
            return None
        role, content = m.group(1), m.group(2)
        if role == "user" and content.startswith("<tool_response>\n") and content.endswith("\n</tool_response>"):
            msgs.append({"role": "tool", "content": content[len("<tool_response>\n") : -len("\n</tool_response>")]})
        else:
            msgs.append({"role": role, "content": content})
        pos = m.end()
    if body[pos:].strip() or not msgs:
        return None
    return msgs


class _CancelWatch:
    """Shuts the response's socket down when ``cancel`` fires, so a blocked read returns at once."""

    def __init__(self, cancel: CancelToken | None) -> None:
        self.cancel = cancel
        self.sock: socket.socket | None = None
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def attach(self, resp: httpx.Response) -> None:
        if self.cancel is None:
            return
        stream = resp.extensions.get("network_stream")
        self.sock = stream.get_extra_info("socket") if stream is not None else None
        self.thread = threading.Thread(target=self._run, name="tau-remote-cancel", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        assert self.cancel is not None
        while not self.stop.wait(0.05):
            if self.cancel.cancelled:
                if self.sock is not None:
                    try:
                        self.sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return

    def close(self) -> None:
        self.stop.set()


class RemoteEngine:
    """An Engine served over HTTP. ``kind``: "auto" (probe), "tau" or "openai"."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        model: str | None = None,
        kind: str = "auto",
        timeout: float = 10.0,
        n_ctx: int = 16384,
        pid: int | None = None,
    ) -> None:
        self.root = _root_of(base_url)
        self.api_key = api_key or None
        self.timeout = timeout
        self.pid = pid
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(headers=headers, timeout=httpx.Timeout(timeout), trust_env=False)
        self._lock = threading.Lock()  # the caches below may be touched from several threads
        self._tokens_cache: OrderedDict[str, int] = OrderedDict()
        self._rendered: OrderedDict[str, tuple[list[dict], list[dict] | None]] = OrderedDict()
        self._tokenize_ok = True
        self.closed = False
        try:
            self.kind = kind if kind != "auto" else self._probe_kind()
            self._info = self._load_info(model, n_ctx)
        except Exception:
            self._http.close()
            raise

    # -- setup ----------------------------------------------------------------------------
    def _get(self, path: str) -> httpx.Response:
        try:
            resp = self._http.get(self.root + path)
        except httpx.HTTPError as e:
            raise RemoteEngineError(f"cannot reach {self.root}: {e}") from None
        if resp.status_code in (401, 403):
            raise RemoteEngineError(f"{self.root} refused the API key ({_error_text(resp)})")
        return resp

    def _probe_kind(self) -> str:
        resp = self._get("/tau/v1/info")
        if resp.status_code == 200:
            try:
                if "api_version" in resp.json():
                    return "tau"
            except ValueError:
                pass
        return "openai"

    def _load_info(self, model: str | None, n_ctx: int) -> ModelInfo:
        if self.kind == "tau":
            d = self._get("/tau/v1/info").json()
            self.pid = self.pid or d.get("pid")
            return ModelInfo(
                name=model or d.get("model_id") or d.get("name", "tau"), path=d.get("path", ""), n_ctx=int(d["n_ctx"]),
                arch=d.get("arch", ""), quant=d.get("quant", ""), size_bytes=int(d.get("size_bytes") or 0),
                draft_name=d.get("draft_name"), backend=f"{d.get('backend') or 'llama.cpp'} via tau serve at {self.root}",
            )
        resp = self._get("/v1/models")
        if resp.status_code != 200:
            raise RemoteEngineError(f"{self.root}/v1/models answered {_error_text(resp)}")
        try:
            data = [m for m in resp.json().get("data", []) if isinstance(m, dict) and m.get("id")]
        except (ValueError, AttributeError):
            raise RemoteEngineError(f"{self.root}/v1/models did not answer an OpenAI model list") from None
        entry: dict = {}
        if model:
            entry = next((m for m in data if m["id"] == model), {"id": model})
        elif data:
            entry = data[0]
        else:
            raise RemoteEngineError(f"{self.root} lists no models; name one")
        meta = entry.get("meta") or {}
        ctx = entry.get("max_model_len") or entry.get("context_length") or meta.get("n_ctx") or meta.get("n_ctx_train")
        if not ctx:
            try:
                props = self._http.get(self.root + "/props").json()
                ctx = (props.get("default_generation_settings") or {}).get("n_ctx")
            except Exception:
                ctx = None
        return ModelInfo(name=str(entry["id"]), path=self.root, n_ctx=int(ctx or n_ctx),
                         backend=f"openai-compatible endpoint {self.root}")

    # -- Engine protocol -----------------------------------------------------------------
    @property
    def info(self) -> ModelInfo:
        return self._info

    def count_tokens(self, text: str) -> int:
        with self._lock:
            cached = self._tokens_cache.get(text)
            if cached is not None:
                self._tokens_cache.move_to_end(text)
                return cached
        n = self._count_remote(text)
        with self._lock:
            self._tokens_cache[text] = n
            while len(self._tokens_cache) > 512:
                self._tokens_cache.popitem(last=False)
        return n

    def _count_remote(self, text: str) -> int:
        if self._tokenize_ok:
            try:
                if self.kind == "tau":
                    r = self._http.post(self.root + "/tau/v1/tokenize", json={"text": text})
                    r.raise_for_status()
                    return int(r.json()["count"])
                r = self._http.post(self.root + "/tokenize", json={"content": text})  # llama-server
                r.raise_for_status()
                return len(r.json()["tokens"])
            except Exception:
                if self.kind != "tau":
                    self._tokenize_ok = False
        return len(text) // 3 + 1  # conservative estimate (code is ~3-4 chars a token)

    def chat_prompt(self, messages: Sequence[dict], tools: Sequence[dict] | None = None,
                    add_generation_prompt: bool = True) -> str:
        if self.kind == "tau":
            try:
                r = self._http.post(self.root + "/tau/v1/template", json={
                    "messages": list(messages), "tools": list(tools) if tools else None,
                    "add_generation_prompt": add_generation_prompt})
                r.raise_for_status()
                return str(r.json()["prompt"])
            except Exception:
                pass
        prompt = render_chatml(messages, tools, add_generation_prompt)
        if self.kind != "tau" and add_generation_prompt:
            with self._lock:
                self._rendered[prompt] = ([dict(m) for m in messages], list(tools) if tools else None)
                while len(self._rendered) > 16:
                    self._rendered.popitem(last=False)
        return prompt

    def register_context(self, key: str, text: str) -> None:
        if self.kind != "tau":
            return
        try:
            self._http.post(self.root + "/tau/v1/context", json={"key": key, "text": text})
        except httpx.HTTPError:
            pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._http.close()

    # -- generation ----------------------------------------------------------------------
    def _body(self, request: GenerateRequest) -> tuple[str, dict]:
        s = request.sampling
        body: dict[str, Any] = {"model": self._info.name, "max_tokens": request.max_tokens,
                                "temperature": s.temperature, "top_p": s.top_p, "stream": True,
                                "stream_options": {"include_usage": True}}
        if request.stop:
            body["stop"] = list(request.stop)
        if s.seed is not None:
            body["seed"] = s.seed
        if self.kind == "tau":
            body.update(prompt=request.prompt if isinstance(request.prompt, str) else list(request.prompt),
                        top_k=s.top_k, min_p=s.min_p, repeat_penalty=s.repeat_penalty, spec=request.spec,
                        tau_token_ids=True)
            return "/v1/completions", body
        if s.top_k:
            body["top_k"] = s.top_k
        if s.min_p:
            body["min_p"] = s.min_p
        if isinstance(request.prompt, str):
            with self._lock:
                known = self._rendered.get(request.prompt)
            if known is not None:
                body["messages"] = known[0]
                if known[1]:
                    body["tools"] = known[1]
                return "/v1/chat/completions", body
            msgs = parse_chatml(request.prompt)
            if msgs is not None:
                body["messages"] = msgs
                return "/v1/chat/completions", body
        body["prompt"] = request.prompt if isinstance(request.prompt, str) else list(request.prompt)
        return "/v1/completions", body

    def stream(self, request: GenerateRequest, cancel: CancelToken | None = None) -> Iterator[EngineEvent]:
        t0 = time.perf_counter()
        first: float | None = None
        path, body = self._body(request)
        texts: list[str] = []
        ids: list[int] = []
        server_stats: GenStats | None = None
        usage: dict = {}
        timings: dict = {}
        finish = "stop"
        tool_calls: dict[int, dict] = {}
        error: str | None = None
        last_stats = t0
        n_chunks = 0
        watch = _CancelWatch(cancel)
        try:
            if cancel is not None and cancel.cancelled:
                raise _Cancelled
            with self._http.stream("POST", self.root + path, json=body,
                                   timeout=httpx.Timeout(self.timeout, read=900.0)) as resp:
                if resp.status_code != 200:
                    resp.read()
                    error = _error_text(resp)
                else:
                    watch.attach(resp)
                    for line in resp.iter_lines():
                        if cancel is not None and cancel.cancelled:
                            raise _Cancelled
                        if not line.startswith("data:"):
                            continue
                        payload = line[5:].strip()
                        if payload == "[DONE]":
                            break
                        try:
                            data = json.loads(payload)
                        except json.JSONDecodeError:
                            continue
                        if "error" in data:
                            err = data["error"]
                            error = str(err.get("message") if isinstance(err, dict) else err)
                            break
                        if isinstance(data.get("usage"), dict):
                            usage = data["usage"]
                        if isinstance(data.get("timings"), dict):
                            timings = data["timings"]
                        if isinstance(data.get("tau_stats"), dict):
                            server_stats = stats_from_dict(data["tau_stats"])
                            yield StatsEvent(server_stats)
                        if data.get("tau_finish_reason"):
                            finish = str(data["tau_finish_reason"])
                        for ch in data.get("choices") or []:
                            text = ch.get("text")
                            delta = ch.get("delta") or {}
                            if text is None:
                                text = delta.get("content")
                            for tc in delta.get("tool_calls") or []:
                                slot = tool_calls.setdefault(int(tc.get("index", len(tool_calls))), {"name": "", "arguments": ""})
                                fn = tc.get("function") or {}
                                slot["name"] += fn.get("name") or ""
                                slot["arguments"] += fn.get("arguments") or ""
                            if ch.get("finish_reason") and not data.get("tau_finish_reason"):
                                finish = "length" if ch["finish_reason"] == "length" else "stop"
                            if text:
                                if first is None:
                                    first = time.perf_counter()
                                n_chunks += 1
                                texts.append(text)
                                tok = tuple(int(t) for t in data.get("tau_token_ids") or ())
                                ids.extend(tok)
                                yield TokenEvent(text, tok)
                        now = time.perf_counter()
                        if server_stats is None and first is not None and now - last_stats > STATS_EVERY_S:
                            last_stats = now
                            yield StatsEvent(self._client_stats(request, t0, first, now, n_chunks, {}, {}))
        except _Cancelled:
            finish = "cancelled"
        except httpx.HTTPError as e:
            if cancel is not None and cancel.cancelled:
                finish = "cancelled"
            else:
                error = f"{self.root}: {type(e).__name__}: {e}"
        finally:
            watch.close()
        if tool_calls and finish != "cancelled":
            for _, tc in sorted(tool_calls.items()):
                try:
                    args: Any = json.loads(tc["arguments"] or "{}")
                except json.JSONDecodeError:
                    args = tc["arguments"]
                call = "<tool_call>\n" + json.dumps({"name": tc["name"], "arguments": args}) + "\n</tool_call>"
                texts.append(("\n" if texts else "") + call)
                yield TokenEvent(texts[-1], ())
        now = time.perf_counter()
        if finish == "cancelled" or server_stats is None:
            stats = self._client_stats(request, t0, first, now, n_chunks, usage, timings)
            if server_stats is not None:
                stats = server_stats
        else:
            stats = server_stats
        if error is not None:
            finish = "error"
        yield DoneEvent("".join(texts), tuple(ids), finish, stats, error=error)

    def _client_stats(self, request: GenerateRequest, t0: float, first: float | None, now: float,
                      n_chunks: int, usage: dict, timings: dict) -> GenStats:
        """Stats measured here, overridden by what the server reports (usage, llama-server timings)."""
        prompt_tokens = int(usage.get("prompt_tokens") or timings.get("prompt_n") or 0)
        completion = int(usage.get("completion_tokens") or timings.get("predicted_n") or n_chunks)
        cached = int(((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or timings.get("cache_n") or 0)
        prefill_s = (first - t0) if first is not None else now - t0
        decode_s = (now - first) if first is not None else 0.0
        if timings.get("prompt_ms") is not None:
            prefill_s = float(timings["prompt_ms"]) / 1000.0
        if timings.get("predicted_ms") is not None:
            decode_s = float(timings["predicted_ms"]) / 1000.0
        drafted: dict[str, int] = {}
        accepted: dict[str, int] = {}
        passes = 0
        if timings.get("draft_n"):
            drafted["server"] = int(timings["draft_n"])
            accepted["server"] = int(timings.get("draft_n_accepted") or 0)
            passes = max(1, completion - accepted["server"])
        return GenStats(prompt_tokens=prompt_tokens, reused_tokens=cached, completion_tokens=completion,
                        prefill_s=prefill_s, decode_s=decode_s, wall_s=now - t0, verify_passes=passes,
                        drafted=drafted, accepted=accepted)


class _Cancelled(Exception):
    pass
