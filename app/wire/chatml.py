"""Qwen2.5 and Qwen3: ChatML (``<|im_start|>role ... <|im_end|>``) with Hermes-style tool calls.

Calls are ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (several per message),
results come back as user turns wrapped in ``<tool_response>``, and the tool schemas sit in the
system turn inside ``<tools>``, as Qwen's own templates write them. Qwen3 also thinks in
``<think>...</think>`` before answering: its template drops the thinking of earlier turns from
the history, and so does ``render`` here; front ends fold it (``app.wire.visible``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.wire.base import Wire, call_parts, tool_json
from app.wire.calls import tagged_finder

START, END = "<|im_start|>", "<|im_end|>"
GEN_PROMPT = START + "assistant\n"
TOOLS_PREAMBLE = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_POST = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)
THINK = re.compile(r"<think>.*?</think>\s*", re.S)
_TURN = re.compile(r"<\|im_start\|>(\w+)\n(.*?)<\|im_end\|>\n?", re.S)
find_calls = tagged_finder("tool_call|function_call|tools")


class Qwen25(Wire):
    name = "qwen2.5"
    stop = (END, "<|endoftext|>", "<tool_response>")
    finder = staticmethod(find_calls)
    markup = (START + "assistant\n", START + "user\n", START + "system\n", START, END, "<|endoftext|>")
    default_system = "You are a helpful assistant."
    call_open, call_close = "<tool_call>\n", "\n</tool_call>"

    def protocol(self, example: str) -> str:
        return (
            "To call a tool, write one JSON object per call inside <tool_call></tool_call> tags, for example:\n"
            f"{example}\nYou may make several calls in one message. Tool results come back in <tool_response> tags."
        )

    def tools_block(self, tools: Sequence[dict]) -> str:
        return TOOLS_PREAMBLE + "\n" + tool_json(tools) + TOOLS_POST if tools else ""

    def native_tools(self, template: str) -> bool:
        return True  # Qwen's templates write tools, tool calls and tool results themselves

    def prepare(self, messages: Sequence[dict], tools: Sequence[dict] | None,
                template: str) -> tuple[list[dict], list[dict] | None]:
        return [dict(m) for m in messages], list(tools) if tools else None

    def system_text(self, system: str, tools: Sequence[dict] | None) -> str:
        return (system or self.default_system) + "\n\n" + self.tools_block(tools) if tools else system

    def history_content(self, content: str, later_user: bool) -> str:
        return content

    def render(self, messages: Sequence[dict], tools: Sequence[dict] | None,
               add_generation_prompt: bool, bos_token: str = "") -> str:
        msgs = list(messages)
        system = ""
        if msgs and msgs[0].get("role") == "system":
            system = str(msgs[0].get("content") or "")
            msgs = msgs[1:]
        system = self.system_text(system, tools)
        out = [f"{START}system\n{system}{END}\n"] if system else []
        last_user = max((i for i, m in enumerate(msgs) if m.get("role") == "user"), default=-1)
        for i, m in enumerate(msgs):
            role = str(m.get("role") or "user")
            content = str(m.get("content") or "")
            if role == "tool":
                out.append(f"{START}user\n<tool_response>\n{content}\n</tool_response>{END}\n")
                continue
            if role == "assistant":
                content = self.history_content(content, i < last_user)
                if m.get("tool_calls"):
                    parts = [content] if content else []
                    parts += [self.call_text(*call_parts(tc)) for tc in m["tool_calls"]]
                    content = "\n".join(parts)
            out.append(f"{START}{role}\n{content}{END}\n")
        if add_generation_prompt:
            out.append(GEN_PROMPT)
        return "".join(out)


class Qwen3(Qwen25):
    name = "qwen3"
    default_system = ""

    def system_text(self, system: str, tools: Sequence[dict] | None) -> str:
        return (system + "\n\n" if system else "") + self.tools_block(tools) if tools else system

    def history_content(self, content: str, later_user: bool) -> str:
        # Qwen3's template keeps the thinking of the turn in progress only
        return THINK.sub("", content).strip() if later_user else content


QWEN25 = Qwen25()
QWEN3 = Qwen3()


def parse_prompt(prompt: str) -> list[dict] | None:
    """Messages back from a ChatML prompt that ends with the assistant generation prompt."""
    if not prompt.endswith(GEN_PROMPT):
        return None
    body = prompt[: -len(GEN_PROMPT)]
    msgs: list[dict] = []
    pos = 0
    for m in _TURN.finditer(body):
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


def render_chatml(messages: Sequence[dict], tools: Sequence[dict] | None = None,
                  add_generation_prompt: bool = True) -> str:
    """Qwen2.5's ChatML as tau writes it without the model's template."""
    return QWEN25.render(messages, tools, add_generation_prompt)
