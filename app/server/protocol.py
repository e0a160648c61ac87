"""OpenAI wire format: request validation, errors and response bodies."""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Sequence
from typing import Any

from engine.types import SPEC_MODES, GenerateRequest, GenStats, SamplingParams

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
FINISH = {"stop": "stop", "length": "length", "cancelled": "stop", "error": "stop", "loop": "stop"}
MAX_DEPTH = 64  # JSON nesting a request may have; OpenAI bodies need a handful of levels
MAX_SEED = 2**63 - 1
MAX_TOP_K = 1 << 20
UNKNOWN_VOCAB_IDS = 1 << 31  # the bound on token ids when the engine does not report its vocabulary
MIN_TEMPERATURE = 1e-3  # above 0 (greedy), a smaller one overflows the sampler's 1/T


class ApiError(Exception):
    """An OpenAI-style error answer: ``{"error": {"message", "type", "param", "code"}}``."""

    def __init__(self, status: int, message: str, type_: str = "invalid_request_error",
                 code: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type_
        self.code = code
        self.param = param

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:24]}"


def now() -> int:
    return int(time.time())


def parse_json_body(raw: bytes) -> dict:
    if not raw.strip():
        raise ApiError(400, "request body is empty; expected a JSON object")
    try:
        data = json.loads(raw)
    except RecursionError:
        raise ApiError(400, f"request body is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, an integer of thousands of digits
        raise ApiError(400, f"request body is not valid JSON: {str(e).splitlines()[0][:200]}") from None
    if not isinstance(data, dict):
        raise ApiError(400, "request body must be a JSON object")
    check_plain(data)
    return data


def check_plain(data: Any) -> None:
    """Refuse nesting deeper than MAX_DEPTH and strings that are not valid Unicode (lone surrogates)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            if not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    raise ApiError(400, "request body holds a string with a lone surrogate (\\ud800-\\udfff)") from None
            continue
        if not isinstance(v, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            raise ApiError(400, f"request body is nested more than {MAX_DEPTH} levels deep")
        items = [*v.keys(), *v.values()] if isinstance(v, dict) else v
        stack.extend((x, depth + 1) for x in items)


# ---- typed getters -------------------------------------------------------------------


def _num(body: dict, name: str, lo: float | None = None, hi: float | None = None) -> float | None:
    v = body.get(name)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ApiError(400, f"'{name}' must be a number", param=name)
    if isinstance(v, float) and not math.isfinite(v):
        raise ApiError(400, f"'{name}' must be a finite number, got {v}", param=name)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ApiError(400, f"'{name}' must be between {lo} and {hi}, got {_short(v)}", param=name)
    return float(v)


def _int(body: dict, name: str, lo: int | None = None, hi: int | None = None) -> int | None:
    v = body.get(name)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ApiError(400, f"'{name}' must be an integer", param=name)
    if lo is not None and v < lo:
        raise ApiError(400, f"'{name}' must be at least {lo}, got {_short(v)}", param=name)
    if hi is not None and v > hi:
        raise ApiError(400, f"'{name}' must be at most {hi}, got {_short(v)}", param=name)
    return v


def _short(v: float) -> str:
    text = str(v)
    return text if len(text) <= 24 else text[:10] + f"...({len(text)} digits)"


def _stop(body: dict) -> tuple[str, ...]:
    v = body.get("stop")
    if v is None:
        return ()
    if isinstance(v, str):
        return (v,) if v else ()
    if isinstance(v, list) and all(isinstance(s, str) for s in v) and len(v) <= 16:
        return tuple(s for s in v if s)
    raise ApiError(400, "'stop' must be a string or a list of at most 16 strings", param="stop")


def sampling_from(body: dict, defaults: SamplingParams) -> SamplingParams:
    temperature = _num(body, "temperature", 0.0, 2.0)
    if temperature is not None and 0.0 < temperature < MIN_TEMPERATURE:
        raise ApiError(400, f"'temperature' must be 0 (greedy) or at least {MIN_TEMPERATURE}", param="temperature")
    top_p = _num(body, "top_p", 0.0, 1.0)
    top_k = _int(body, "top_k", 0, MAX_TOP_K)
    min_p = _num(body, "min_p", 0.0, 1.0)
    repeat_penalty = _num(body, "repeat_penalty", 0.0, 10.0)
    if repeat_penalty is not None and repeat_penalty <= 0.0:
        raise ApiError(400, "'repeat_penalty' must be above 0 (1 = off)", param="repeat_penalty")
    for unused in ("frequency_penalty", "presence_penalty"):  # accepted for OpenAI clients, not applied
        _num(body, unused, -2.0, 2.0)
    seed = _int(body, "seed", 0, MAX_SEED)
    return SamplingParams(
        temperature=defaults.temperature if temperature is None else temperature,
        top_k=defaults.top_k if top_k is None else top_k,
        top_p=defaults.top_p if top_p is None else top_p,
        min_p=defaults.min_p if min_p is None else min_p,
        repeat_penalty=defaults.repeat_penalty if repeat_penalty is None else repeat_penalty,
        repeat_last_n=defaults.repeat_last_n,
        seed=defaults.seed if seed is None else seed,
        temper_last=defaults.temper_last,  # the server's order (tau serve --temperature-last), not a request's
    )


def generate_request(body: dict, prompt: str | tuple[int, ...], n_prompt: int, n_ctx: int,
                     defaults: SamplingParams, default_max_tokens: int | None = None) -> GenerateRequest:
    """Validate the generation fields of a request and build the engine request. A request that
    sets no max_tokens gets the rest of the context (OpenAI's convention), or at most
    ``default_max_tokens`` (``tau serve --max-tokens``)."""
    n = _int(body, "n", 1)
    if n not in (None, 1):
        raise ApiError(400, "only n=1 is supported (one resident model, one stream)", param="n")
    if n_prompt >= n_ctx:
        raise ApiError(
            400,
            f"This model's maximum context length is {n_ctx} tokens. However, your prompt has "
            f"{n_prompt} tokens. Please reduce the length of the messages.",
            code="context_length_exceeded", param="messages",
        )
    max_tokens = _int(body, "max_completion_tokens", 1)
    if max_tokens is None:
        max_tokens = _int(body, "max_tokens", 1)
    room = n_ctx - n_prompt
    if max_tokens is None:
        max_tokens = default_max_tokens or room
    max_tokens = min(max_tokens, room)
    spec = body.get("spec", "auto")
    if spec not in SPEC_MODES:
        raise ApiError(400, f"'spec' must be one of {', '.join(SPEC_MODES)}", param="spec")
    return GenerateRequest(prompt=prompt, max_tokens=max_tokens, sampling=sampling_from(body, defaults),
                           stop=_stop(body), spec=spec)


def want_stream(body: dict) -> bool:
    v = body.get("stream", False)
    if not isinstance(v, bool):
        raise ApiError(400, "'stream' must be true or false", param="stream")
    return v


def include_usage(body: dict) -> bool:
    opts = body.get("stream_options")
    return isinstance(opts, dict) and bool(opts.get("include_usage"))


def _text_of(content: Any, where: str) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict) and p.get("type") in ("text", "input_text") and isinstance(p.get("text"), str):
                parts.append(p["text"])
            else:
                kind = p.get("type") if isinstance(p, dict) else type(p).__name__
                raise ApiError(400, f"{where}: content part of type {kind!r} is not supported (text only)",
                               param="messages")
        return "".join(parts)
    raise ApiError(400, f"{where}: 'content' must be a string or a list of text parts", param="messages")


def normalize_messages(raw: Any) -> list[dict]:
    if not isinstance(raw, list) or not raw:
        raise ApiError(400, "'messages' must be a non-empty list", param="messages")
    out: list[dict] = []
    for i, m in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            raise ApiError(400, f"{where} must be an object", param="messages")
        role = m.get("role")
        if role not in ROLES:
            raise ApiError(400, f"{where}: unknown role {role!r}", param="messages")
        msg = dict(m)
        msg["role"] = {"developer": "system", "function": "tool"}.get(role, role)
        msg["content"] = _text_of(m.get("content"), where)
        if msg["content"] is None and not (role == "assistant" and m.get("tool_calls")):
            msg["content"] = ""
        tcs = m.get("tool_calls")
        if tcs is not None and not (isinstance(tcs, list) and all(map(_valid_call, tcs))):
            raise ApiError(400, f"{where}: 'tool_calls' must be a list of {{'function': {{'name': str, "
                           "'arguments': str or object}}}}", param="messages")
        out.append(msg)
    return out


def _valid_call(t: Any) -> bool:
    fn = t.get("function") if isinstance(t, dict) else None
    return (isinstance(fn, dict) and isinstance(fn.get("name"), str)
            and isinstance(fn.get("arguments", ""), (str, dict)))


def normalize_tools(body: dict) -> list[dict] | None:
    tools = body.get("tools")
    choice = body.get("tool_choice")
    if tools is None or tools == []:
        return None
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise ApiError(400, "'tools' must be a list of objects", param="tools")
    for i, t in enumerate(tools):
        fn = t.get("function") if t.get("type", "function") == "function" else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise ApiError(400, f"tools[{i}] must be {{'type': 'function', 'function': {{'name': ...}}}}", param="tools")
    if choice == "none":
        return None
    return tools


def prompt_of_completion(body: dict, n_vocab: int = 0) -> str | tuple[int, ...]:
    """The prompt text, or its token ids (each below ``n_vocab`` when the engine reports it)."""
    p = body.get("prompt")
    if isinstance(p, list) and len(p) == 1 and isinstance(p[0], (str, list)):
        p = p[0]
    if isinstance(p, str):
        return p
    bound = n_vocab if n_vocab > 0 else UNKNOWN_VOCAB_IDS
    if isinstance(p, list) and p and all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in p):
        bad = next((t for t in p if t >= bound), None)
        if bad is not None:
            raise ApiError(400, f"'prompt' token id {_short(bad)} is outside the vocabulary (ids 0..{bound - 1})",
                           param="prompt")
        return tuple(p)
    raise ApiError(400, "'prompt' must be a string or a list of token ids (one prompt per request)", param="prompt")


def usage(stats: GenStats, n_prompt: int) -> dict:
    prompt = stats.prompt_tokens or n_prompt
    return {
        "prompt_tokens": prompt,
        "completion_tokens": stats.completion_tokens,
        "total_tokens": prompt + stats.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": stats.reused_tokens},
    }


def sse(data: dict | str) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"data: {payload}\n\n".encode()


def tool_calls_payload(calls: Sequence, with_index: bool = False) -> list[dict]:
    return [c.to_openai(i if with_index else None) for i, c in enumerate(calls)]
