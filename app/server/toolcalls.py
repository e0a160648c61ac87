"""Qwen/Hermes-style tool calls: ``<tool_call>{json}</tool_call>`` in generated text -> OpenAI ``tool_calls``.

``parse_tool_calls`` works on a finished text; ``ToolCallFilter`` works on a stream: it passes
plain content through as it arrives and holds back everything from the first ``<tool_call>``
on, so a streaming client never sees the markup.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as OpenAI sends it

    def to_openai(self, index: int | None = None) -> dict:
        d: dict = {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}
        if index is not None:
            d["index"] = index
        return d


def new_call_id() -> str:
    return "call_" + uuid.uuid4().hex[:24]


def _parse_one(body: str) -> ToolCall | None:
    try:
        obj = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        return None
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        args_text = args
    else:
        args_text = json.dumps(args if args is not None else {}, ensure_ascii=False)
    return ToolCall(new_call_id(), obj["name"], args_text)


def parse_tool_calls(text: str) -> tuple[str, list[ToolCall]]:
    """Split generated text into (content without the tool-call blocks, calls).

    A block whose JSON does not parse stays in the content, so nothing the model wrote is lost.
    """
    if OPEN not in text:
        return text, []
    calls: list[ToolCall] = []
    kept: list[str] = []
    pos = 0
    for m in _BLOCK.finditer(text):
        call = _parse_one(m.group(1))
        if call is None:
            continue
        kept.append(text[pos : m.start()])
        calls.append(call)
        pos = m.end()
    kept.append(text[pos:])
    content = "\n".join(k.strip() for k in kept if k.strip()) if calls else text
    return content, calls


class ToolCallFilter:
    """Streaming side of :func:`parse_tool_calls`.

    ``feed(delta)`` returns the content that is safe to show now; ``finish()`` returns the
    remaining content and the parsed calls.
    """

    def __init__(self) -> None:
        self._pending = ""  # text that might be the start of "<tool_call>"
        self._tail = ""  # everything from the first "<tool_call>" on
        self._in_call = False
        self.emitted: list[str] = []

    def feed(self, delta: str) -> str:
        if self._in_call:
            self._tail += delta
            return ""
        buf = self._pending + delta
        i = buf.find(OPEN)
        if i >= 0:
            self._in_call = True
            self._tail = buf[i:]
            self._pending = ""
            out = buf[:i]
        else:
            # hold back a suffix that could still grow into "<tool_call>"
            keep = 0
            for k in range(min(len(OPEN) - 1, len(buf)), 0, -1):
                if OPEN.startswith(buf[-k:]):
                    keep = k
                    break
            out, self._pending = (buf[:-keep], buf[-keep:]) if keep else (buf, "")
        if out:
            self.emitted.append(out)
        return out

    def finish(self) -> tuple[str, list[ToolCall]]:
        """(content not yet emitted, calls)."""
        if not self._in_call:
            rest, self._pending = self._pending, ""
            return rest, []
        content, calls = parse_tool_calls(self._tail)
        if not calls:
            return self._tail, []
        # the text before the first call was emitted already; keep any text between/after calls
        return ("\n" + content if content else ""), calls
