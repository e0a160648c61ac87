"""Prompts per model family: detection, rendering through the model's template or the family's
own renderer (never ChatML for a non-ChatML model), and the agent's byte-stable fixed prefix."""

from __future__ import annotations

import logging

import pytest
from agent_helpers import make_agent

from app.agent.prompts import fixed_prompt
from app.agent.toolbox import tool_schemas
from app.wire import FAMILIES, wire_for
from engine.scripted import ScriptedEngine
from engine.types import ModelInfo
from tests.engine import chat_templates as T

MSGS = [
    {"role": "system", "content": "SYS"},
    {"role": "user", "content": "fix it"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": {"path": "a.py"}}},
        {"id": "call_2", "type": "function", "function": {"name": "run_shell", "arguments": '{"command": "ls"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "A"},
    {"role": "tool", "tool_call_id": "call_2", "name": "run_shell", "content": "B"},
]


def info(**kw) -> ModelInfo:
    return ModelInfo(**{"name": "m", "path": "/m.gguf", "n_ctx": 4096, **kw})


@pytest.mark.parametrize("kw, family", [
    ({"chat_template": T.QWEN}, "qwen2.5"),
    ({"chat_template": T.QWEN + "<think>"}, "qwen3"),
    ({"chat_template": T.QWEN, "arch": "qwen3"}, "qwen3"),
    ({"chat_template": T.LLAMA3, "arch": "llama"}, "llama3"),
    ({"chat_template": T.GEMMA, "arch": "gemma3"}, "gemma"),
    ({"chat_template": "{{ '[INST]' }}", "arch": "llama"}, "mistral"),
    ({"arch": "gemma2"}, "gemma"),
    ({"arch": "qwen2"}, "qwen2.5"),
    ({"arch": "llama", "special_tokens": T.LLAMA3_TOKENS}, "llama3"),
    ({"arch": "llama", "special_tokens": ("[INST]", "[/INST]")}, "mistral"),
    ({"arch": "llama"}, "generic"),
    ({"arch": "phi3"}, "generic"),
    ({"name": "Qwen2.5-Coder-1.5B-Instruct"}, "qwen2.5"),  # an endpoint's model id is all there is
    ({"name": "meta-llama/Llama-3.1-8B-Instruct"}, "llama3"),
    ({"name": "gemma-3-4b-it"}, "gemma"),
    ({"name": "gpt-4o"}, "generic"),
    ({"family": "gemma", "chat_template": T.QWEN}, "gemma"),  # what the engine declares wins
])
def test_detection(kw, family):
    assert wire_for(info(**kw)).name == family


def test_stop_strings_per_family():
    assert "<|im_end|>" in FAMILIES["qwen2.5"].stop
    assert "<|eot_id|>" in FAMILIES["llama3"].stop and "<|im_end|>" not in FAMILIES["llama3"].stop
    assert "<end_of_turn>" in FAMILIES["gemma"].stop and "<|im_end|>" not in FAMILIES["gemma"].stop
    assert "</s>" in FAMILIES["mistral"].stop


def test_qwen_template_renders_tool_history_natively():
    eng = ScriptedEngine(family="", chat_template=T.QWEN)
    p = eng.chat_prompt(MSGS)
    assert p.startswith("<|im_start|>system\nSYS<|im_end|>\n")
    assert '<tool_call>\n{"name": "run_shell", "arguments": {"command": "ls"}}\n</tool_call>' in p
    assert "<tool_response>\nB\n</tool_response>" in p and p.endswith("<|im_start|>assistant\n")


def test_llama3_template_gets_calls_as_json_text_and_results_as_ipython():
    eng = ScriptedEngine(family="", chat_template=T.LLAMA3)
    p = eng.chat_prompt(MSGS)
    assert p.startswith("<|start_header_id|>system<|end_header_id|>\n\nSYS<|eot_id|>")
    assert '{"name": "read_file", "parameters": {"path": "a.py"}}\n{"name": "run_shell"' in p
    assert "<|start_header_id|>ipython<|end_header_id|>\n\nA\n\nB<|eot_id|>" in p
    assert p.endswith("<|start_header_id|>assistant<|end_header_id|>\n\n") and "<|im_start|>" not in p


def test_gemma_template_gets_system_folded_and_turns_alternating():
    eng = ScriptedEngine(family="", chat_template=T.GEMMA)
    p = eng.chat_prompt(MSGS, tools=[{"type": "function", "function": {"name": "read_file"}}])
    assert p.startswith("<start_of_turn>user\nSYS\n\nTo call a tool, write a fenced block")  # system -> first user turn
    assert '"name": "read_file"' in p.split("<end_of_turn>")[0]  # the schemas went in as text
    assert "<start_of_turn>model\n```tool_call\n{\"name\": \"read_file\"" in p
    assert "Result of read_file:\nA\n\nResult of run_shell:\nB<end_of_turn>" in p
    assert p.endswith("<start_of_turn>model\n") and "<|im_start|>" not in p


def test_a_template_that_raises_falls_back_to_the_family_not_chatml(caplog):
    eng = ScriptedEngine(family="", chat_template=T.GEMMA_BROKEN)
    with caplog.at_level(logging.WARNING, logger="tau.engine"):
        first = eng.chat_prompt(MSGS)
        again = eng.chat_prompt(MSGS[:2])
    assert first.startswith("<bos><start_of_turn>user\nSYS\n\nfix it<end_of_turn>\n<start_of_turn>model\n")
    assert "<|im_start|>" not in first + again and again.endswith("<start_of_turn>model\n")
    said = [r.getMessage() for r in caplog.records if "chat template" in r.getMessage()]
    assert len(said) == 1 and "gemma" in said[0]  # said once, naming the format used


@pytest.mark.parametrize("family", ["qwen2.5", "llama3", "gemma", "mistral", "generic"])
def test_two_workspaces_share_the_whole_fixed_prefix(tmp_path, family):
    prompts, systems = [], []
    for name in ("one", "two"):
        root = tmp_path / name / "work"
        root.mkdir(parents=True)
        (root / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
        engine = ScriptedEngine(["done"], family=family)
        agent, _ = make_agent(engine, root)
        agent.run_turn("hi")
        prompts.append(engine.prompts[0])
        systems.append(agent.messages[0]["content"])
    a, b = prompts
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    wire = wire_for(engine.info)
    fixed = systems[0].split("\n\n# Workspace\n")[0]  # what the agent puts before this run's facts
    assert fixed.startswith(fixed_prompt(agent.tools, wire)[:200])
    assert wire.tools_block(tool_schemas(agent.tools)) in fixed  # the tool schemas are in the fixed part
    assert fixed in a[:common]  # the whole fixed part lies inside the shared prefix
    assert str(tmp_path / "one") in a and str(tmp_path / "one") not in a[:common]


def test_agent_on_a_gemma_model_speaks_gemma(repo):
    reply = '```tool_call\n{"name": "read_file", "arguments": {"path": "calc.py"}}\n```'
    engine = ScriptedEngine([reply, "The bug is in add."], family="", chat_template=T.GEMMA)
    agent, _ = make_agent(engine, repo)
    final = agent.run_turn("what is wrong in calc.py?")
    assert final.status == "done" and "The bug is in add." in final.message
    assert all("<|im_start|>" not in p and "<tool_call>" not in p for p in engine.prompts)
    assert engine.requests[0].stop == FAMILIES["gemma"].stop
    assert "return a - b" in engine.prompts[1]  # the tool result came back as a user turn


def test_agent_on_a_llama3_model_speaks_llama3(repo):
    reply = 'I will read it.\n{"name": "read_file", "parameters": {"path": "calc.py"}}'
    engine = ScriptedEngine([reply, "add subtracts."], family="", chat_template=T.LLAMA3)
    agent, _ = make_agent(engine, repo)
    final = agent.run_turn("what is wrong in calc.py?")
    assert final.status == "done" and "add subtracts." in final.message
    assert engine.requests[0].stop == FAMILIES["llama3"].stop
    second = engine.prompts[1]
    assert '{"name": "read_file", "parameters": {"path": "calc.py"}}<|eot_id|>' in second  # the call, as Llama writes it
    assert "<|start_header_id|>ipython<|end_header_id|>" in second and "return a - b" in second
    assert "<|im_start|>" not in second and "<tool_call>" not in second
