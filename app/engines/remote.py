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
text in the model family's call form (app.wire), the form the agent loop parses. Server speed
figures (``usage``, llama-server's ``timings``) go into GenStats where the server gives them.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import httpx

from app.engines.remote_wire import (
    CancelWatch,
    client_stats,
    error_text,
    parse_chatml,
    root_of,
    stats_from_dict,
)
from app.wire import wire_for
from engine.chat_template import chat_prompt as render_prompt
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

STATS_EVERY_S = 0.25


class RemoteEngineError(RuntimeError):
    """The endpoint cannot be used (unreachable, refused the key, no model); one line."""


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
        self.root = root_of(base_url)
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
            raise RemoteEngineError(f"{self.root} refused the API key ({error_text(resp)})")
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
                family=str(d.get("family") or ""),
            )
        resp = self._get("/v1/models")
        if resp.status_code != 200:
            raise RemoteEngineError(f"{self.root}/v1/models answered {error_text(resp)}")
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
                         backend=f"openai-compatible endpoint {self.root}",
                         arch=str(meta.get("arch") or ""), family=str(meta.get("family") or ""))

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
        prompt = render_prompt(self._info, None, messages, tools, add_generation_prompt)  # its family's format
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

    def prime(self, prompt: str, cancel: CancelToken | None = None, save: bool = True) -> int:
        """Ask tau's server to compute ``prompt`` now (an OpenAI endpoint cannot: 0 computed)."""
        if self.kind != "tau" or self.closed or (cancel is not None and cancel.cancelled):
            return 0
        try:
            resp = self._http.post(self.root + "/tau/v1/prime", json={"prompt": prompt, "save": save}, timeout=None)
            return int(resp.json().get("computed", 0)) if resp.status_code == 200 else 0
        except (httpx.HTTPError, ValueError, AttributeError):
            return 0

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
        watch = CancelWatch(cancel)
        try:
            if cancel is not None and cancel.cancelled:
                raise _Cancelled
            with self._http.stream("POST", self.root + path, json=body,
                                   timeout=httpx.Timeout(self.timeout, read=900.0)) as resp:
                if resp.status_code != 200:
                    resp.read()
                    error = error_text(resp)
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
                            yield StatsEvent(client_stats(t0, first, now, n_chunks, {}, {}))
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
                call = wire_for(self._info).call_text(tc["name"], args)
                texts.append(("\n" if texts else "") + call)
                yield TokenEvent(texts[-1], ())
        now = time.perf_counter()
        if finish == "cancelled" or server_stats is None:
            stats = client_stats(t0, first, now, n_chunks, usage, timings)
            if server_stats is not None:
                stats = server_stats
        else:
            stats = server_stats
        if error is not None:
            finish = "error"
        yield DoneEvent("".join(texts), tuple(ids), finish, stats, error=error)

class _Cancelled(Exception):
    pass
