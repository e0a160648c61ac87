"""tau serve on the real default model pack (slow; runs in CI where the pack is installed)."""

from __future__ import annotations

import importlib.util
import json
import time

import httpx
import openai
import pytest

from app.config import Config
from app.engines.factory import open_engine
from app.engines.remote import RemoteEngine
from app.server import ServerThread, create_app
from engine.types import GenerateRequest, SamplingParams, generate

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed"),
]

TOOLS = [{"type": "function", "function": {
    "name": "read_file", "description": "Read a text file of the repository.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]


@pytest.fixture(scope="module")
def real_server():
    engine = open_engine(Config(n_ctx=4096), local=True)
    try:
        with ServerThread(create_app(engine)) as srv:
            yield srv, engine
    finally:
        engine.close()


def test_real_model_chat_stream_tools_and_stats(real_server):
    srv, engine = real_server
    c = openai.OpenAI(base_url=srv.url + "/v1", api_key="x", max_retries=0, timeout=600)
    msgs = [{"role": "user", "content": "Write a Python function add(a, b) that returns a + b. Code only."}]
    r = c.chat.completions.create(model=engine.info.name, messages=msgs, max_tokens=24, temperature=0)
    assert r.choices[0].message.content and "def add" in r.choices[0].message.content
    assert r.usage.completion_tokens > 0 and r.usage.prompt_tokens > 10
    st = r.model_extra["tau_stats"]
    assert st["completion_tokens"] == r.usage.completion_tokens and st["verify_passes"] > 0 and st["tau"] >= 1.0
    assert st["decode_tok_s"] > 0

    chunks = list(c.chat.completions.create(model=engine.info.name, messages=msgs, max_tokens=16, temperature=0,
                                            stream=True, stream_options={"include_usage": True}))
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text.strip() and len([ch for ch in chunks if ch.choices and ch.choices[0].delta.content]) > 1
    assert chunks[-1].usage.completion_tokens > 0
    # same conversation again: the engine's KV cache serves the prompt prefix (the server adds nothing)
    final = next(ch for ch in chunks if ch.choices and ch.choices[0].finish_reason)
    assert final.model_extra["tau_stats"]["reused_tokens"] > 0
    assert chunks[-1].usage.prompt_tokens_details.cached_tokens == final.model_extra["tau_stats"]["reused_tokens"]

    r = c.chat.completions.create(
        model=engine.info.name, tools=TOOLS, max_tokens=40, temperature=0,
        messages=[{"role": "user", "content": "Use the read_file tool to read the file README.md."}])
    choice = r.choices[0]
    assert choice.finish_reason in ("tool_calls", "stop", "length")
    if choice.finish_reason == "tool_calls":
        call = choice.message.tool_calls[0]
        assert call.function.name == "read_file" and isinstance(json.loads(call.function.arguments), dict)
        assert "<tool_call>" not in (choice.message.content or "")


def test_real_model_attached_remote_and_cancel(real_server):
    srv, engine = real_server
    remote = RemoteEngine(srv.url)
    assert remote.kind == "tau" and remote.info.n_ctx == engine.info.n_ctx
    prompt = remote.chat_prompt([{"role": "user", "content": "Say hello."}])
    assert prompt == engine.chat_prompt([{"role": "user", "content": "Say hello."}])
    assert remote.count_tokens(prompt) == engine.count_tokens(prompt)
    done = generate(remote, GenerateRequest(prompt, max_tokens=8, sampling=SamplingParams(temperature=0.0)))
    assert done.text and done.finish_reason in ("stop", "length") and done.stats.verify_passes > 0
    # a client that drops a long generation frees the engine for the next one
    long = {"model": engine.info.name, "stream": True, "max_tokens": 2000,
            "messages": [{"role": "user", "content": "Count from 1 to 1000, one number per line."}]}
    with httpx.Client(timeout=600, trust_env=False) as h:
        with h.stream("POST", srv.url + "/v1/chat/completions", json=long) as resp:
            n = 0
            for line in resp.iter_lines():
                n += line.startswith("data: ")
                if n >= 5:
                    break
        t0 = time.monotonic()
        r = h.post(srv.url + "/v1/chat/completions", json={"model": engine.info.name, "max_tokens": 4,
                   "messages": [{"role": "user", "content": "Say hi."}]})
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"]
    assert time.monotonic() - t0 < 60  # not the ~2000 tokens of the dropped request
    remote.close()
