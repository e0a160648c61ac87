"""What a front end shows of a reply: no tool calls, no template markup, thinking folded away.

``visible_text`` works on a finished reply and, with ``partial=True``, on one still streaming
(markup that may still be growing is held back). ``split_thinking`` gives a reply's thinking
(Qwen3's ``<think>`` block) apart from its answer, for a front end that folds it.
"""

from __future__ import annotations

import re

from app.wire.calls import looks_like_call
from app.wire.chatml import QWEN25
from app.wire.gemma import GEMMA
from app.wire.jsonrepair import loads_lenient
from app.wire.llama3 import LLAMA3
from app.wire.mistral import MISTRAL

_TAGGED = re.compile(r"<(tool_call|function_call|tools)>.*?(?:</\1>|$)", re.S)
_TO_END = re.compile(r"(?:\[TOOL_CALLS\]|<\|python_tag\|>).*$", re.S)
_FENCE = re.compile(r"```[A-Za-z_]*[ \t]*(?:\n|$)(.*?)(```|$)", re.S)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S)
MARKUP = tuple(sorted({*QWEN25.markup, *LLAMA3.markup, *GEMMA.markup, *MISTRAL.markup}, key=len, reverse=True))
# a made-up next turn (the model writing the user's, the system's or a tool's part): the reply ends there
NEXT_TURN = re.compile(
    r"<\|im_start\|>\s*(?:user|system|tool)\b|<tool_response>|<start_of_turn>\s*user\b"
    r"|<\|start_header_id\|>\s*(?:user|system|ipython)\b|\[INST\]"
)
# turn markers that stray into a reply, made-up ones such as <|im_assistant> included
STRAY_MARKERS = re.compile(
    r"<\|im_start\|>\s*(?:assistant\b)?|<\|start_header_id\|>\s*assistant\s*<\|end_header_id\|>"
    r"|<start_of_turn>\s*(?:model\b)?|<end_of_turn>|\[/INST\]|</s>\s*$"
    r"|<\|[A-Za-z][A-Za-z0-9_]*\|?>"  # <|im_end|>, <|eot_id|>, <|endoftext|>, <|im_assistant>
)
OPENERS = ("<tool_call>", "<function_call>", "<tools>", "[TOOL_CALLS]", "<|python_tag|>", "<think>", *MARKUP)


def split_thinking(text: str) -> tuple[str, str]:
    """(thinking, answer). A reply whose template opened ``<think>`` itself starts inside it."""
    if "</think>" in text and "<think>" not in text.split("</think>", 1)[0]:
        text = "<think>" + text
    thinking = "\n".join(m.group(0)[len("<think>"):].removesuffix("</think>").strip() for m in _THINK.finditer(text))
    return thinking.strip(), _THINK.sub("", text)


def _fence(partial: bool):
    def hide(m: re.Match[str]) -> str:
        body = m.group(1).strip()
        if m.group(2):  # a finished block: hidden only if it is a tool call
            return "" if ('"name"' in body and ('"arguments"' in body or '"parameters"' in body)) else m.group(0)
        if partial and (not body or body.startswith(("{", "["))):
            return ""  # may become a call: wait
        return m.group(0)
    return hide


def _is_call(text: str) -> bool:
    try:
        value = loads_lenient(text)
    except ValueError:
        return False
    values = value if isinstance(value, list) else [value]
    return bool(values) and all(looks_like_call(v) for v in values)


def strip_turns(text: str) -> str:
    """``text`` cut where a made-up next turn starts, without stray turn markers."""
    m = NEXT_TURN.search(text)
    return STRAY_MARKERS.sub("", text[: m.start()] if m else text).strip()


def strip_markup(text: str) -> str:
    """``text`` without thinking, template tokens and a made-up next turn (a parsed reply's prose)."""
    _, text = split_thinking(text)
    text = strip_turns(text)
    for token in MARKUP:
        text = text.replace(token, "")
    return text.strip()


def visible_text(raw: str, partial: bool = False) -> str:
    """``raw`` without tool calls, thinking and template markup (see the module doc)."""
    _, text = split_thinking(raw)
    turn = NEXT_TURN.search(text)
    text = _TO_END.sub("", _TAGGED.sub("", text[: turn.start()] if turn else text))
    text = _FENCE.sub(_fence(partial), text)
    for token in MARKUP:
        text = text.replace(token, "")
    text = STRAY_MARKERS.sub("", text)
    stripped = text.strip()
    if stripped.startswith(("{", "[")) and (partial or _is_call(stripped)):
        return ""
    if partial:  # hold back a suffix that may still grow into markup
        cut = max(text.rfind("<"), text.rfind("["))
        if cut >= 0 and any(o.startswith(text[cut:]) for o in OPENERS):
            text = text[:cut]
        text = text.rstrip("`") if text.endswith("`") and not text.endswith("```") else text  # a fence to be
    return text.strip()


class VisibleStream:
    """Append-only visible text of a stream, for a front end that prints and cannot erase."""

    def __init__(self) -> None:
        self.raw = ""
        self.shown = ""

    def feed(self, delta: str) -> str:
        """The new text safe to print after ``delta`` arrived ('' while markup is undecided)."""
        self.raw += delta
        now = visible_text(self.raw, partial=True)
        if not now.startswith(self.shown) or len(now) == len(self.shown):
            return ""
        new, self.shown = now[len(self.shown):], now
        return new
