"""tau serve on a Gemma model (no native tool format): the request's tools reach the prompt as
the fenced-JSON protocol, and the fenced call the model writes comes back as OpenAI tool_calls,
streamed or not, with no ChatML anywhere."""

from __future__ import annotations

import json

import openai

from engine.scripted import ScriptedEngine
from tests.engine import chat_templates as T

TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                           "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
REPLY = 'Reading it.\n```tool_call\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```'
MSGS = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "what is in a.py?"}]


def client(srv) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.url + "/v1", api_key="unused", max_retries=0, timeout=30)


def test_gemma_model_gets_tools_as_text_and_its_calls_come_back_structured(serve):
    eng = ScriptedEngine([REPLY, REPLY], family="", chat_template=T.GEMMA)
    srv = serve(eng)
    r = client(srv).chat.completions.create(model="scripted", messages=MSGS, tools=TOOLS)
    prompt = eng.prompts[0]
    assert prompt.startswith("<start_of_turn>user\nBe brief.\n\nTo call a tool, write a fenced block")
    assert '"name": "read_file"' in prompt and "<|im_start|>" not in prompt
    msg = r.choices[0].message
    assert r.choices[0].finish_reason == "tool_calls" and msg.content == "Reading it."
    assert [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls] == [("read_file", {"path": "a.py"})]
    chunks = list(client(srv).chat.completions.create(model="scripted", messages=MSGS, tools=TOOLS, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert text.strip() == "Reading it." and "```" not in text
    assert [tc.function.name for tc in calls] == ["read_file"]
    info = client(srv).models.list().data[0].model_extra["meta"]
    assert info["family"] == "gemma"
