"""Mistral: ``[INST] ... [/INST]`` turns, ``</s>`` after each answer, ``[TOOL_CALLS]`` for calls.

Calls are ``[TOOL_CALLS][{"name": ..., "arguments": {...}}]`` (v3 tokenizers) or
``[TOOL_CALLS]name[ARGS]{...}`` (v11+); results come back as ``[TOOL_RESULTS]`` user text.
Mistral's templates demand strict user/assistant alternation and nine-character call ids, so
``prepare`` writes calls and results into the text; ``render`` keeps the system text in
front of the first user turn, where it stays a fixed prefix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from app.wire.base import Wire
from app.wire.calls import Found

TOOL_CALLS = "[TOOL_CALLS]"
_CALLS = re.compile(r"\[TOOL_CALLS\]\s*(.*?)(?=\[TOOL_CALLS\]|</s>|$)", re.S)
_NAMED = re.compile(r"^([\w.-]+)\s*(?:\[CALL_ID\]\s*\w+\s*)?\[ARGS\]\s*(.*)$", re.S)


def find_calls(text: str) -> list[Found]:
    found = []
    for m in _CALLS.finditer(text):
        body = m.group(1).strip()
        named = _NAMED.match(body)
        if named:  # name[ARGS]{...}: the arguments are JSON text, kept for the lenient reader
            body = '{"name": ' + json.dumps(named.group(1)) + ', "arguments": ' + (named.group(2).strip() or "{}") + "}"
        found.append(Found(m.start(), m.end(), body))
    return found


class Mistral(Wire):
    name = "mistral"
    stop = ("</s>", "[INST]")
    finder = staticmethod(find_calls)
    markup = ("[INST]", "[/INST]", "</s>", "<s>", "[TOOL_RESULTS]", "[/TOOL_RESULTS]")
    system_role = False

    def call_text(self, name: str, arguments: dict | str) -> str:
        return TOOL_CALLS + json.dumps([{"name": name, "arguments": arguments}], ensure_ascii=False)

    def protocol(self, example: str) -> str:
        return (
            f"To call a tool, write {TOOL_CALLS} and then a JSON list of calls, each with \"name\" and"
            f" \"arguments\", for example:\n{example}\nTool results come back in the next message."
        )

    def tools_block(self, tools: Sequence[dict]) -> str:
        return "[AVAILABLE_TOOLS]" + json.dumps(list(tools)) + "[/AVAILABLE_TOOLS]" if tools else ""

    def result_text(self, name: str, content: str) -> str:
        return "[TOOL_RESULTS]" + content + "[/TOOL_RESULTS]"

    def render(self, messages: Sequence[dict], tools: Sequence[dict] | None,
               add_generation_prompt: bool, bos_token: str = "") -> str:
        out = [bos_token or "<s>"]
        for m in self.textual(messages, tools):
            if m["role"] == "assistant":
                out.append(m["content"].strip() + "</s>")
            else:
                out.append(f"[INST] {m['content'].strip()} [/INST]")
        return "".join(out)


MISTRAL = Mistral()
