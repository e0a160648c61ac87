"""Chat prompts: the model's own Jinja template, and the seam to the app's wire formats.

The engine renders a conversation with the GGUF's ``tokenizer.chat_template``. What a model
family's conversation looks like when that template is missing or raises, and how tool calls
are written for a template that knows none, belongs to the app (``app.wire``), which the
engine may not import: the app registers it with ``use_formats`` and the engine asks it per
model. A template that raises is reported once in the log, then the family's own renderer
is used: never another family's markup, so a Gemma model never sees ChatML.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from engine.types import ModelInfo

log = logging.getLogger("tau.engine")


class TemplateError(ValueError):
    """The conversation cannot be rendered for this model; the message is one line."""


class ChatFormat(Protocol):
    """A model family's prompt conventions, as the engine needs them (app.wire.base.Wire)."""

    name: str

    def prepare(self, messages: Sequence[dict], tools: Sequence[dict] | None,
                template: str) -> tuple[list[dict], list[dict] | None]: ...

    def render(self, messages: Sequence[dict], tools: Sequence[dict] | None,
               add_generation_prompt: bool, bos_token: str = "") -> str: ...


Resolver = Callable[[ModelInfo], ChatFormat]
_resolver: list[Resolver] = []
_reported: set[tuple[str, str]] = set()


def use_formats(resolver: Resolver) -> None:
    """Register the app's family lookup (app.wire does this when imported)."""
    _resolver[:] = [resolver]


def _one_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def chat_prompt(
    info: ModelInfo,
    template: str | None,
    messages: Sequence[dict],
    tools: Sequence[dict] | None = None,
    add_generation_prompt: bool = True,
    *,
    bos_token: str = "",
    eos_token: str = "",
) -> str:
    """The prompt for ``messages``: the model's template, else its family's renderer."""
    fmt = _resolver[0](info) if _resolver else None
    msgs, tls = fmt.prepare(messages, tools, template or "") if fmt else (list(messages), list(tools) if tools else None)
    if template:
        try:
            return render_jinja(template, msgs, tls, add_generation_prompt, bos_token, eos_token)
        except Exception as e:  # jinja2 cannot run every template: say so once, use the family's own
            if fmt is None:
                raise TemplateError(f"the chat template of {info.name} failed: {_one_line(e)}") from None
            key = (info.path or info.name, _one_line(e))
            if key not in _reported:
                _reported.add(key)
                log.warning("the chat template of %s failed (%s); rendering with tau's %s format instead",
                            info.name, _one_line(e), fmt.name)
    elif fmt is None:
        raise TemplateError(f"{info.name} has no chat template and no chat format is registered")
    return fmt.render(msgs, tls, add_generation_prompt, bos_token)


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
