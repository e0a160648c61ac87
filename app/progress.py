"""A one-line progress bar on stderr for model assembly and loading."""

from __future__ import annotations

import sys
import time


class ProgressBar:
    def __init__(self, stream=None, width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self._label = ""
        self._last = 0.0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def __call__(self, label: str, fraction: float) -> None:
        now = time.monotonic()
        if label != self._label:
            if self._label and self.tty:
                self.stream.write("\n")
            self._label = label
            if not self.tty:
                self.stream.write(f"tau: {label}\n")
                self.stream.flush()
        if not self.tty:
            return
        if fraction < 1.0 and now - self._last < 0.1:
            return
        self._last = now
        filled = int(self.width * max(0.0, min(1.0, fraction)))
        bar = "█" * filled + "░" * (self.width - filled)
        self.stream.write(f"\r{label} {bar} {fraction * 100:5.1f}%")
        if fraction >= 1.0:
            self.stream.write("\n")
            self._label = ""
        self.stream.flush()
