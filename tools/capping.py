"""Output caps that keep the head and the tail (the end of a log is where errors are)."""

from __future__ import annotations

from collections import deque

DEFAULT_CAP = 30_000


def cap_text(text: str, limit: int = DEFAULT_CAP) -> str:
    """``text`` if short enough, else its head and tail with a marker saying what was cut."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters omitted ...]\n{text[-tail:]}"


class HeadTailBuffer:
    """Collects a stream of bytes, keeping at most ``limit`` of them: the first half and
    the most recent half. Memory stays bounded however much a command prints."""

    def __init__(self, limit: int = DEFAULT_CAP) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.total = 0

    def write(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_len += len(chunk)
        while self.tail and self.tail_len - len(self.tail[0]) >= self.tail_limit:
            self.tail_len -= len(self.tail.popleft())

    @property
    def omitted(self) -> int:
        kept = len(self.head) + min(self.tail_len, self.tail_limit)
        return self.total - kept

    def text(self) -> str:
        tail = b"".join(self.tail)[-self.tail_limit :] if self.tail else b""
        head = self.head.decode("utf-8", errors="replace")
        tail_s = tail.decode("utf-8", errors="replace")
        if self.omitted:
            return f"{head}\n[... {self.omitted} bytes omitted ...]\n{tail_s}"
        return head + tail_s
