"""What every wire format is: the base a family module fills in, and the generic fenced-JSON protocol.

A wire format says how one model family's conversation is written as text: how a prompt is
rendered when the model's own Jinja template cannot do it (``render``), how a conversation
is reshaped before its template sees it (``prepare``: tool calls and results written as the
template knows them), how a tool call is written (``call_text``) and found again (``parse``),
which strings end a reply (``stop``) and what a front end shows (``visible``).

The base class is the generic protocol for a model whose family is unknown: tool calls are
fenced ```` ```tool_call ```` blocks of JSON, tool results come back as user turns, and the
prompt is plain "System:/User:/Assistant:" text (never another family's markup).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from app.wire.calls import Finder, ParsedReply, parse_calls


def call_parts(tc: dict) -> tuple[str, dict | str]:
    """(name, arguments) of one OpenAI-style tool call; string arguments are read as JSON."""
    fn = tc.get("function", tc) if isinstance(tc, dict) else {}
    args = fn.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            pass
    return str(fn.get("name") or ""), args


def tool_json(tools: Sequence[dict]) -> str:
    return "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)


def merge_turns(messages: list[dict]) -> list[dict]:
    """Consecutive messages of one role become one (templates that demand alternation)."""
    out: list[dict] = []
    for m in messages:
        if out and out[-1]["role"] == m["role"]:
            out[-1] = {"role": m["role"], "content": out[-1]["content"] + "\n\n" + m["content"]}
        else:
            out.append(dict(m))
    return out


def fold_system(messages: list[dict]) -> list[dict]:
    """System text goes in front of the first user turn (families without a system role)."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system" and m["content"])
    rest = [m for m in messages if m["role"] != "system"]
    if not system:
        return rest
    if rest and rest[0]["role"] == "user":
        return [{"role": "user", "content": system + "\n\n" + rest[0]["content"]}, *rest[1:]]
    return [{"role": "user", "content": system}, *rest]


class Wire:
    """The generic fenced-JSON protocol; family modules override what their format changes."""

    name = "generic"
    stop: tuple[str, ...] = ("</s>", "<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<end_of_turn>")
    finder: Finder | None = None  # the family's native call form, tried first by ``parse``
    markup: tuple[str, ...] = ()  # template tokens a front end never shows
    system_role = True  # the template has a system role (else system text joins the first user turn)

    call_open, call_close = "```tool_call\n", "\n```"  # what wraps one call's JSON object

    # -- tool calls ---------------------------------------------------------------------
    def call_text(self, name: str, arguments: dict | str) -> str:
        """One tool call written the way the model is asked to write it."""
        return self.call_open + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + self.call_close

    def protocol(self, example: str) -> str:
        """The system prompt's paragraph on how to call a tool; ``example`` is one call_text."""
        return (
            "To call a tool, write a fenced block tagged tool_call holding one JSON object with"
            f" \"name\" and \"arguments\", for example:\n{example}\n"
            "You may make several calls in one message, one block each. Tool results come back"
            " in the next message."
        )

    def tools_block(self, tools: Sequence[dict]) -> str:
        """The tools' schemas as the system prompt lists them."""
        return "# Tools\n\nThe tools you can call, as JSON schemas:\n" + tool_json(tools) if tools else ""

    def result_text(self, name: str, content: str) -> str:
        return f"Result of {name}:\n{content}" if name and name != "error" else content

    def parse(self, text: str, known: Collection[str] | None = None) -> ParsedReply:
        """Prose and tool calls of a reply: this family's form first, then every other one."""
        from app.wire.registry import FINDERS  # the registry imports every family module

        finders = [f for f in (self.finder,) if f is not None] + [f for f in FINDERS if f is not self.finder]
        parsed = parse_calls(text, known, finders)
        return ParsedReply(self.prose(parsed.content), parsed.calls, parsed.errors, parsed.unread)

    def visible(self, text: str) -> str:
        """What a front end shows of ``text``: no tool calls, no thinking, no template markup."""
        from app.wire.visible import visible_text

        return visible_text(text)

    def prose(self, text: str) -> str:
        """A parsed reply's prose without thinking and template tokens."""
        from app.wire.visible import strip_markup

        return strip_markup(text)

    # -- prompts --------------------------------------------------------------------------
    def native_tools(self, template: str) -> bool:
        """Whether the model's template writes the tool schemas itself."""
        return False

    def prepare(self, messages: Sequence[dict], tools: Sequence[dict] | None,
                template: str) -> tuple[list[dict], list[dict] | None]:
        """The conversation as the template can take it: for a template without tool support,
        tool calls become call_text, tool results user turns, the schemas system text."""
        if tools and self.native_tools(template):
            return [dict(m) for m in messages], list(tools)
        return self.textual(messages, tools), None

    def textual(self, messages: Sequence[dict], tools: Sequence[dict] | None) -> list[dict]:
        out: list[dict] = []
        for m in messages:
            role = str(m.get("role") or "user")
            content = str(m.get("content") or "")
            if role == "assistant" and m.get("tool_calls"):
                parts = [content] if content.strip() else []
                parts += [self.call_text(*call_parts(tc)) for tc in m["tool_calls"]]
                out.append({"role": "assistant", "content": "\n".join(parts)})
            elif role == "tool":
                out.append({"role": "user", "content": self.result_text(str(m.get("name") or ""), content)})
            else:
                out.append({"role": role, "content": content})
        if tools:
            block = self.protocol(self.call_text("tool_name", {"argument": "value"})) + "\n\n" + self.tools_block(tools)
            if out and out[0]["role"] == "system":
                out[0] = {"role": "system", "content": out[0]["content"] + "\n\n" + block}
            else:
                out.insert(0, {"role": "system", "content": block})
        out = merge_turns(out)
        return out if self.system_role else merge_turns(fold_system(out))

    def render(self, messages: Sequence[dict], tools: Sequence[dict] | None,
               add_generation_prompt: bool, bos_token: str = "") -> str:
        """The prompt without the model's template (it has none, or it raised)."""
        names = {"system": "System", "user": "User", "assistant": "Assistant"}
        out = [f"{names.get(m['role'], m['role'].title())}: {m['content']}\n\n" for m in self.textual(messages, tools)]
        if add_generation_prompt:
            out.append("Assistant:")
        return bos_token + "".join(out)


def arguments_json(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
