"""The server through the official openai client, on a ScriptedEngine."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from app.wire.chatml import render_chatml
from engine.scripted import ScriptedEngine
from engine.types import SamplingParams

TOOLS = [
    {"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "shell", "parameters": {"type": "object", "properties": {}}}},
]
CALL_REPLY = ('Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "app/main.py"}}\n</tool_call>\n'
              '<tool_call>\n{"name": "shell", "arguments": {"cmd": "ls -la"}}\n</tool_call>')


def client(srv, key: str = "unused") -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.url + "/v1", api_key=key, max_retries=0, timeout=30)


def test_models_lists_the_resident_model(serve):
    srv = serve(ScriptedEngine(name="qwen-test", n_ctx=4096), model_name="tau-qwen")
    models = client(srv).models.list()
    assert [m.id for m in models.data] == ["tau-qwen"]
    assert models.data[0].model_extra["meta"]["n_ctx"] == 4096


def test_non_streaming_chat_usage_and_tau_stats(serve):
    eng = ScriptedEngine(["Hello there, how can I help?"])
    srv = serve(eng)
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    r = client(srv).chat.completions.create(model="scripted", messages=msgs)
    assert r.object == "chat.completion"
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].message.content == "Hello there, how can I help?"
    assert r.choices[0].finish_reason == "stop"
    assert eng.prompts == [render_chatml(msgs)]  # the engine saw the templated conversation
    assert r.usage is not None
    assert r.usage.prompt_tokens == eng.count_tokens(eng.prompts[0])
    assert r.usage.completion_tokens == 7  # 28 chars, 4 per scripted token
    assert r.usage.total_tokens == r.usage.prompt_tokens + 7
    stats = r.model_extra["tau_stats"]
    assert stats["completion_tokens"] == 7
    assert stats["tau"] == pytest.approx(7 / 3, abs=1e-3)  # scripted tau 2.5 -> 3 verify passes
    assert stats["verify_passes"] == 3
    assert stats["drafted"] == {"ngram": 7} and stats["accepted"] == {"ngram": 4}
    assert set(stats) >= {"prompt_tokens", "reused_tokens", "decode_tok_s", "accept_by_pos", "ceiling_frac"}


def test_streaming_chat(serve):
    reply = "def add(a, b):\n    return a + b\n"
    srv = serve(ScriptedEngine([reply]))
    chunks = list(client(srv).chat.completions.create(
        model="scripted", messages=[{"role": "user", "content": "write add"}], stream=True,
        stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == reply
    n = -(-len(reply) // 4)  # scripted tokens are 4 characters
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) == n  # streamed, not one blob
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finals) == 1 and finals[0].choices[0].finish_reason == "stop"
    assert finals[0].model_extra["tau_stats"]["completion_tokens"] == n
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == n
    assert len({c.id for c in chunks}) == 1


def test_streaming_without_usage_option_sends_no_usage_chunk(serve):
    srv = serve(ScriptedEngine(["ok"]))
    chunks = list(client(srv).chat.completions.create(model="scripted", messages=[{"role": "user", "content": "x"}],
                                                       stream=True))
    assert all(c.choices for c in chunks)


def test_max_tokens_and_stop(serve):
    eng = ScriptedEngine(["0123456789abcdef", "alpha STOP beta"])
    srv = serve(eng)
    c = client(srv)
    r = c.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "x"}], max_tokens=2)
    assert r.choices[0].message.content == "01234567" and r.choices[0].finish_reason == "length"
    r = c.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "x"}], stop=["STOP"],
                                  temperature=0.7, top_p=0.9, seed=7)
    assert r.choices[0].message.content == "alpha "
    req = eng.requests[-1]
    assert req.stop == ("STOP",) and req.sampling.temperature == 0.7 and req.sampling.top_p == 0.9
    assert req.sampling.seed == 7


def test_a_request_without_max_tokens_gets_the_servers_default_cap_and_one_that_sets_it_its_own(serve):
    # a model caught in a loop (`if n == K: return ...` for K = 3, 4, ...) writes until the context is
    # full when nothing caps it: minutes on a CPU, which an aider request without max_tokens waited out
    reply = "0123456789abcdef"
    msgs = [{"role": "user", "content": "x"}]
    capped = client(serve(ScriptedEngine([reply] * 3), default_max_tokens=2))
    r = capped.chat.completions.create(model="scripted", messages=msgs)
    assert r.choices[0].message.content == "01234567" and r.choices[0].finish_reason == "length"
    r = capped.chat.completions.create(model="scripted", messages=msgs, max_tokens=3)  # the request's own wins
    assert r.choices[0].message.content == "0123456789ab" and r.choices[0].finish_reason == "length"
    r = capped.completions.create(model="scripted", prompt="p")
    assert r.choices[0].text == "01234567" and r.choices[0].finish_reason == "length"
    uncapped = client(serve(ScriptedEngine([reply])))
    r = uncapped.chat.completions.create(model="scripted", messages=msgs)
    assert r.choices[0].message.content == reply and r.choices[0].finish_reason == "stop"


def test_tool_calls_non_streaming(serve):
    eng = ScriptedEngine([CALL_REPLY])
    srv = serve(eng)
    r = client(srv).chat.completions.create(model="scripted", messages=[{"role": "user", "content": "show main"}],
                                            tools=TOOLS)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me look."
    calls = choice.message.tool_calls
    assert [c.function.name for c in calls] == ["read_file", "shell"]
    assert json.loads(calls[0].function.arguments) == {"path": "app/main.py"}
    assert json.loads(calls[1].function.arguments) == {"cmd": "ls -la"}
    assert all(c.id.startswith("call_") and c.type == "function" for c in calls)
    assert len({c.id for c in calls}) == 2
    # the tools were rendered into the prompt the model saw
    assert '"name": "read_file"' in eng.prompts[0] and "<tools>" in eng.prompts[0]


def test_tool_calls_streaming_hide_markup(serve):
    srv = serve(ScriptedEngine([CALL_REPLY]))
    chunks = list(client(srv).chat.completions.create(
        model="scripted", messages=[{"role": "user", "content": "show main"}], tools=TOOLS, stream=True))
    content = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert "<tool_call" not in content and content.strip() == "Let me look."
    deltas = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    assert [(d.index, d.function.name) for d in deltas] == [(0, "read_file"), (1, "shell")]
    assert json.loads(deltas[0].function.arguments) == {"path": "app/main.py"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_tool_round_trip_renders_tool_messages(serve):
    eng = ScriptedEngine(["The file defines main()."])
    srv = serve(eng)
    msgs = [
        {"role": "user", "content": "show main"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "m.py"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "def main(): pass"},
    ]
    r = client(srv).chat.completions.create(model="scripted", messages=msgs, tools=TOOLS)
    assert r.choices[0].finish_reason == "stop" and r.choices[0].message.tool_calls is None
    p = eng.prompts[0]
    assert '<tool_call>\n{"name": "read_file", "arguments": {"path": "m.py"}}\n</tool_call>' in p
    assert "<tool_response>\ndef main(): pass\n</tool_response>" in p
    assert p == eng.chat_prompt([{**m, "content": m["content"]} for m in msgs], TOOLS)


def test_tool_call_text_without_tools_stays_content(serve):
    srv = serve(ScriptedEngine([CALL_REPLY]))
    r = client(srv).chat.completions.create(model="scripted", messages=[{"role": "user", "content": "x"}])
    assert r.choices[0].message.content == CALL_REPLY and r.choices[0].finish_reason == "stop"


def test_content_parts_are_joined(serve):
    eng = ScriptedEngine(["ok"])
    srv = serve(eng)
    client(srv).chat.completions.create(model="scripted", messages=[
        {"role": "user", "content": [{"type": "text", "text": "part one, "}, {"type": "text", "text": "part two"}]}])
    assert "part one, part two" in eng.prompts[0]


def test_completions_endpoint(serve):
    eng = ScriptedEngine(["raw completion text", "streamed raw"])
    srv = serve(eng)
    c = client(srv)
    r = c.completions.create(model="scripted", prompt="<|im_start|>user\nhi<|im_end|>\n", max_tokens=50)
    assert r.choices[0].text == "raw completion text" and r.choices[0].finish_reason == "stop"
    assert eng.prompts[0] == "<|im_start|>user\nhi<|im_end|>\n"  # applied nothing
    assert r.usage.completion_tokens == 5 and r.model_extra["tau_stats"]["completion_tokens"] == 5
    chunks = list(c.completions.create(model="scripted", prompt="p", stream=True,
                                       stream_options={"include_usage": True}))
    assert "".join(ch.choices[0].text for ch in chunks if ch.choices) == "streamed raw"
    assert chunks[-1].usage.completion_tokens == 3


def test_health_and_metrics(serve):
    srv = serve(ScriptedEngine(["abcdefgh"] * 2))
    c = client(srv)
    for _ in range(2):
        c.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "x"}])
    h = httpx.get(srv.url + "/health").json()
    assert h["status"] == "ok" and h["queue_length"] == 0 and h["busy"] is False
    text = httpx.get(srv.url + "/metrics").text
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    assert samples['tau_requests_total{endpoint="chat",status="200"}'] == 2
    assert samples["tau_completion_tokens_total"] == 4
    assert samples['tau_generations_total{finish_reason="stop"}'] == 2
    assert samples["tau_tau"] == pytest.approx(2.0)  # 4 tokens in 2 passes
    assert samples["tau_queue_length"] == 0 and "tau_decode_tokens_per_second" in samples
    assert samples["tau_last_decode_tokens_per_second"] > 0
    assert "# TYPE tau_completion_tokens_total counter" in text


def test_model_id_defaults_to_the_gguf_stem(serve):
    from dataclasses import replace

    eng = ScriptedEngine(["ok"], name="Qwen2.5 Coder 1.5B Instruct GGUF")
    eng._info = replace(eng.info, path="/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    srv = serve(eng)
    c = client(srv)
    assert [m.id for m in c.models.list().data] == ["qwen2.5-coder-1.5b-instruct-q4_k_m"]
    r = c.chat.completions.create(model="Qwen2.5 Coder 1.5B Instruct GGUF", messages=[{"role": "user", "content": "x"}])
    assert r.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"


def test_a_server_sampling_in_llamas_order_keeps_it_for_requests_that_set_top_k_and_min_p(serve):
    # tau serve --temperature-last: a client tuned on llama-server sends top_k / min_p and gets its chain
    eng = ScriptedEngine(["ok", "ok"])
    srv = serve(eng, defaults=SamplingParams(temperature=0.6, top_p=0.95, temper_last=True))
    client(srv).chat.completions.create(model="scripted", messages=[{"role": "user", "content": "x"}],
                                        extra_body={"top_k": 40, "min_p": 0.05}, temperature=0.8)
    s = eng.requests[-1].sampling
    assert s.temper_last and (s.top_k, s.min_p, s.temperature, s.top_p) == (40, 0.05, 0.8, 0.95)
    plain = ScriptedEngine(["ok"])
    client(serve(plain)).chat.completions.create(model="scripted", messages=[{"role": "user", "content": "x"}])
    assert not plain.requests[-1].sampling.temper_last  # tau's own order unless the server was told
