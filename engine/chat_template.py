"""Chat templates: render a conversation with the model's own Jinja template, ChatML as fallback."""

from __future__ import annotations

import json
from collections.abc import Sequence

CHATML_TOOLS_PREAMBLE = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
CHATML_TOOLS_POST = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


def render_chatml(messages: Sequence[dict], tools: Sequence[dict] | None = None, add_generation_prompt: bool = True) -> str:
    """Qwen2.5-style ChatML, including its tool-calling conventions."""
    out: list[str] = []
    msgs = list(messages)
    system = ""
    if msgs and msgs[0].get("role") == "system":
        system = str(msgs[0].get("content") or "")
        msgs = msgs[1:]
    if tools:
        system = (system or "You are a helpful assistant.") + CHATML_TOOLS_PREAMBLE
        for t in tools:
            system += "\n" + json.dumps(t)
        system += CHATML_TOOLS_POST
    if system:
        out.append(f"<|im_start|>system\n{system}<|im_end|>\n")
    for m in msgs:
        role = m.get("role", "user")
        content = str(m.get("content") or "")
        if role == "tool":
            out.append(f"<|im_start|>user\n<tool_response>\n{content}\n</tool_response><|im_end|>\n")
            continue
        if role == "assistant" and m.get("tool_calls"):
            parts = [content] if content else []
            for tc in m["tool_calls"]:
                fn = tc.get("function", tc)
                args = fn.get("arguments", {})
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except json.JSONDecodeError:
                        pass
                parts.append("<tool_call>\n" + json.dumps({"name": fn.get("name"), "arguments": args}) + "\n</tool_call>")
            content = "\n".join(parts)
        out.append(f"<|im_start|>{role}\n{content}<|im_end|>\n")
    if add_generation_prompt:
        out.append("<|im_start|>assistant\n")
    return "".join(out)


def render_jinja(
    template: str,
    messages: Sequence[dict],
    tools: Sequence[dict] | None,
    add_generation_prompt: bool,
    bos_token: str = "",
    eos_token: str = "",
) -> str:
    """Render a GGUF's ``tokenizer.chat_template`` (HF Jinja) in a sandbox."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(msg: str) -> None:
        raise ValueError(msg)

    def tojson(x, indent=None, ensure_ascii=False, **_kw):  # HF's tojson keeps non-ASCII
        return json.dumps(x, indent=indent, ensure_ascii=ensure_ascii)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    env.filters["tojson"] = tojson
    msgs = []
    for m in messages:
        m = dict(m)
        if m.get("tool_calls"):
            calls = []
            for tc in m["tool_calls"]:
                fn = dict(tc.get("function", tc))
                if isinstance(fn.get("arguments"), str):
                    try:
                        fn["arguments"] = json.loads(fn["arguments"])
                    except json.JSONDecodeError:
                        pass
                calls.append({"type": "function", "function": fn})
            m["tool_calls"] = calls
        msgs.append(m)
    return env.from_string(template).render(
        messages=msgs,
        tools=list(tools) if tools else None,
        add_generation_prompt=add_generation_prompt,
        bos_token=bos_token,
        eos_token=eos_token,
    )
