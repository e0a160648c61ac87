"""Tool calls held back from a stream: what the server sends as content while a reply streams.

``CallFilter.feed`` passes prose through as it arrives and holds back everything that is or
may become a tool call in any form ``Wire.parse`` accepts (native markup from its opener on,
a fenced block until it closes, a reply that starts as JSON); ``finish`` returns what is left
to send and the calls, parsed by the same ``Wire.parse`` the agent uses.
"""

from __future__ import annotations

from collections.abc import Collection

from app.wire.base import Wire
from app.wire.calls import ToolCall

NATIVE = ("<tool_call>", "<function_call>", "[TOOL_CALLS]", "<|python_tag|>")
FENCE = "```"


def _held_suffix(buf: str) -> int:
    """Length of the longest suffix of ``buf`` that could still grow into an opener."""
    for k in range(min(max(map(len, (*NATIVE, FENCE))) - 1, len(buf)), 0, -1):
        if any(o.startswith(buf[-k:]) for o in (*NATIVE, FENCE)):
            return k
    return 0


class CallFilter:
    def __init__(self, wire: Wire, known: Collection[str] | None = None) -> None:
        self.wire, self.known = wire, known
        self._pending = ""  # not sent yet: a possible opener, an open fence, a leading JSON value
        self._tail = ""  # native markup: everything from its opener on
        self._in_call = False
        self._calls: list[ToolCall] = []
        self.emitted: list[str] = []

    def feed(self, delta: str) -> str:
        """The content that is safe to send now."""
        if self._in_call:
            self._tail += delta
            return ""
        buf = self._pending + delta
        out: list[str] = []
        self._pending = ""
        while buf:
            if not self.emitted and not out and (not buf.strip() or buf.lstrip()[0] in "{["):
                self._pending = buf  # a reply that is one JSON value may be a call: hold it whole
                break
            native = min((i for i in (buf.find(o) for o in NATIVE) if i >= 0), default=-1)
            fence = buf.find(FENCE)
            if native >= 0 and (fence < 0 or native < fence):
                out.append(buf[:native])
                self._in_call, self._tail = True, buf[native:]
                break
            if fence >= 0:
                line_end = buf.find("\n", fence)
                close = buf.find(FENCE, line_end) if line_end >= 0 else -1
                if close < 0:
                    out.append(buf[:fence])
                    self._pending = buf[fence:]
                    break
                block, rest = buf[fence : close + len(FENCE)], buf[close + len(FENCE):]
                parsed = self.wire.parse(block, self.known)
                if parsed.calls and not parsed.content:
                    self._calls.extend(parsed.calls)
                    out.append(buf[:fence])
                else:
                    out.append(buf[: close + len(FENCE)])
                buf = rest
                continue
            keep = _held_suffix(buf)
            out.append(buf[:-keep] if keep else buf)
            self._pending = buf[-keep:] if keep else ""
            break
        text = "".join(out)
        if text:
            self.emitted.append(text)
        return text

    def finish(self) -> tuple[str, list[ToolCall]]:
        """(content not yet sent, every call of the reply)."""
        if self._in_call:
            parsed = self.wire.parse(self._tail, self.known)
            if not parsed.calls:
                return self._tail, self._calls
            kept = "\n".join(x for x in (parsed.content, *parsed.unread) if x)
            return ("\n" + kept if kept else ""), self._calls + parsed.calls
        rest, self._pending = self._pending, ""
        if rest.strip():
            parsed = self.wire.parse(rest, self.known)
            if parsed.calls and not parsed.content:
                return "", self._calls + parsed.calls
        return rest, self._calls
