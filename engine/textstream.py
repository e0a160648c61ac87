"""Token bytes to text as it streams: incremental UTF-8, stop strings, held-back tails."""

from __future__ import annotations

import codecs


class TextStream:
    """Feeds token pieces; returns the text safe to show so far.

    Text that could be the start of a stop string is held back until it is known not to
    be one. ``hit`` becomes True when a stop string appears; the text is cut before it.
    """

    def __init__(self, stop: tuple[str, ...] = ()) -> None:
        self._dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.stop = tuple(s for s in stop if s)
        self._hold = max((len(s) for s in self.stop), default=0)
        self.text = ""  # all text decoded so far (cut at a stop string)
        self._shown = 0
        self.hit = False

    def feed(self, piece: bytes) -> str:
        if self.hit:
            return ""
        new = self._dec.decode(piece)
        if not new:
            return ""
        start = max(0, len(self.text) - self._hold)
        self.text += new
        if self.stop:
            cut = -1
            for s in self.stop:
                i = self.text.find(s, start)
                if i >= 0 and (cut < 0 or i < cut):
                    cut = i
            if cut >= 0:
                self.text = self.text[:cut]
                self.hit = True
                return self._release(len(self.text))
            return self._release(len(self.text) - self._partial_stop())
        return self._release(len(self.text))

    def _partial_stop(self) -> int:
        """Length of the longest tail of the text that could begin a stop string."""
        best = 0
        for s in self.stop:
            for k in range(min(len(s) - 1, len(self.text)), best, -1):
                if self.text.endswith(s[:k]):
                    best = k
                    break
        return best

    def finish(self) -> str:
        if not self.hit:
            self.text += self._dec.decode(b"", final=True)
        return self._release(len(self.text))

    def _release(self, upto: int) -> str:
        upto = min(upto, len(self.text))
        if upto <= self._shown:
            return ""
        out = self.text[self._shown : upto]
        self._shown = upto
        return out
