"""Llama 3.x: ``<|start_header_id|>role<|end_header_id|>`` turns ended by ``<|eot_id|>``.

Tool calls are the JSON object Llama 3.1's template asks for, ``{"name": ..., "parameters":
{...}}``, written as the whole reply (or after ``<|python_tag|>``); results come back in
``ipython`` turns. Llama 3.1's template takes one call per assistant message and Llama 3.0's
none, so ``prepare`` writes calls into the text, which every 3.x template renders.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from app.wire.base import Wire
from app.wire.calls import Found

BEGIN = "<|begin_of_text|>"
HEADER = "<|start_header_id|>{role}<|end_header_id|>\n\n"
EOT = "<|eot_id|>"
_PYTHON_TAG = re.compile(r"<\|python_tag\|>(.*?)(?:<\|eom_id\|>|<\|eot_id\|>|$)", re.S)


def find_calls(text: str) -> list[Found]:
    return [Found(m.start(), m.end(), m.group(1)) for m in _PYTHON_TAG.finditer(text)]


class Llama3(Wire):
    name = "llama3"
    stop = (EOT, "<|eom_id|>", "<|end_of_text|>", "<|start_header_id|>")
    finder = staticmethod(find_calls)
    markup = ("<|start_header_id|>assistant<|end_header_id|>", "<|start_header_id|>", "<|end_header_id|>",
              EOT, "<|eom_id|>", BEGIN, "<|end_of_text|>")

    def call_text(self, name: str, arguments: dict | str) -> str:
        return json.dumps({"name": name, "parameters": arguments}, ensure_ascii=False)

    def protocol(self, example: str) -> str:
        return (
            "To call a tool, answer with only a JSON object {\"name\": tool name, \"parameters\": its arguments},"
            f" for example:\n{example}\nOne call per message; its result comes back in the next message."
        )

    def tools_block(self, tools: Sequence[dict]) -> str:
        if not tools:
            return ""
        return "# Tools\n\nYou have access to the following functions:\n" + "\n".join(json.dumps(t) for t in tools)

    def result_text(self, name: str, content: str) -> str:
        return content

    def textual(self, messages: Sequence[dict], tools: Sequence[dict] | None) -> list[dict]:
        # tool results stay in their own turn, the ipython role Llama 3.1 was trained on
        out = []
        for m in messages:
            out.append({**m, "role": "ipython"} if m.get("role") == "tool" else m)
        return super().textual(out, tools)

    def render(self, messages: Sequence[dict], tools: Sequence[dict] | None,
               add_generation_prompt: bool, bos_token: str = "") -> str:
        out = [bos_token or BEGIN]
        for m in self.textual(messages, tools):
            out.append(HEADER.format(role=m["role"]) + m["content"].strip() + EOT)
        if add_generation_prompt:
            out.append(HEADER.format(role="assistant"))
        return "".join(out)


LLAMA3 = Llama3()
