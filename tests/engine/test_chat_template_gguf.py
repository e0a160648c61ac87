"""Tiny GGUFs carrying Qwen, Llama 3 and Gemma chat templates: the engine renders each with the
model's own template (or the family's renderer when it raises), exposes what app.wire needs to
pick the family, tokenizes the family's markup as its special tokens, and stops on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.wire import wire_for
from engine.config import EngineConfig
from engine.types import GenerateRequest, generate
from tests.engine import chat_templates as T
from tests.engine.tinymodel import write_tiny_model

MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


def load(tmp_path: Path, name: str, template: str | None, tokens: tuple[str, ...]):
    from engine.local import LocalEngine

    model = write_tiny_model(tmp_path / f"{name}.gguf", vocab=300, byte_fallback=True,
                             chat_template=template, special_tokens=tokens)
    return LocalEngine.load(EngineConfig(model_path=str(model), n_ctx=512, threads=1, cache_dir=str(tmp_path),
                                         log_path=str(tmp_path / "llama.log")))


CASES = {
    "qwen": (T.QWEN, T.QWEN_TOKENS, "qwen2.5",
             "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"),
    "llama3": (T.LLAMA3, T.LLAMA3_TOKENS, "llama3",
               "<s><|start_header_id|>system<|end_header_id|>\n\nbe brief<|eot_id|>"
               "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"),
    "gemma": (T.GEMMA, T.GEMMA_TOKENS, "gemma",
              "<s><start_of_turn>user\nbe brief\n\nhi<end_of_turn>\n<start_of_turn>model\n"),
    "gemma-broken": (T.GEMMA_BROKEN, T.GEMMA_TOKENS, "gemma",
                     "<s><start_of_turn>user\nbe brief\n\nhi<end_of_turn>\n<start_of_turn>model\n"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_family_prompt_stop_and_calls_from_the_gguf(tmp_path, case):
    template, tokens, family, expected = CASES[case]
    eng = load(tmp_path, case, template, tokens)
    try:
        wire = wire_for(eng.info)
        assert eng.info.chat_template == template and set(tokens) <= set(eng.info.special_tokens)
        assert wire.name == family
        prompt = eng.chat_prompt(MSGS)
        assert prompt == expected  # the GGUF's BOS (<s> here) is the template's bos_token
        assert family == "qwen2.5" or "<|im_start|>" not in prompt
        ids = eng.tokenize(prompt)
        for tok in tokens:  # the family's markup is one special token each, not bytes
            if tok in prompt:
                assert len(eng.tokenize(tok)) == 1, tok
        assert len(ids) < len(prompt.encode())
        stop = next(s for s in wire.stop if s in tokens)  # the family's end of turn is a stop string
        done = generate(eng, GenerateRequest(prompt, max_tokens=8, stop=wire.stop))
        assert done.finish_reason in ("stop", "length") and stop not in done.text
        call = wire.call_text("read_file", {"path": "a.py"})
        assert [c.arguments for c in wire.parse("ok\n" + call, {"read_file"}).calls] == [{"path": "a.py"}]
    finally:
        eng.close()


def test_a_gguf_without_template_gets_its_family_renderer(tmp_path):
    eng = load(tmp_path, "bare", None, T.LLAMA3_TOKENS)
    try:
        assert eng.info.chat_template == "" and wire_for(eng.info).name == "llama3"  # from the tokens
        p = eng.chat_prompt(MSGS)
        assert p.startswith("<s><|start_header_id|>system<|end_header_id|>\n\nbe brief<|eot_id|>")
    finally:
        eng.close()
