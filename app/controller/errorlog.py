"""Errors of a session: the traceback goes to a log file, the user sees one readable line."""

from __future__ import annotations

import logging
import traceback
from pathlib import Path


class ErrorLog:
    """Appends tracebacks to ``path``; a log that cannot be written loses the traceback, not the session."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._log = logging.getLogger(f"tau.session.{path}")
        self._log.propagate = False  # the terminal belongs to the front end

    def write(self, text: str) -> bool:
        try:
            if not self._log.handlers:  # one handler per file, however many sessions write to it
                self.path.parent.mkdir(parents=True, exist_ok=True)
                handler = logging.FileHandler(self.path, encoding="utf-8")
                handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
                self._log.addHandler(handler)
                self._log.setLevel(logging.INFO)
            self._log.error(text)
            for h in self._log.handlers:
                h.flush()
        except OSError:
            return False
        return True

    def exception(self, what: str, exc: BaseException) -> str:
        """Log ``exc``'s traceback; the one-line message that says where it went."""
        logged = self.write(f"{what}: {exc!r}\n" + "".join(traceback.format_exception(exc)))
        return f"{what}: {exc}" + (f"  (traceback in {self.path})" if logged else "")

    def details(self, message: str, details: str) -> str:
        """Log an agent error's details; its message with where they went."""
        logged = self.write(f"agent error: {message}\n{details}")
        return message + (f"  (details in {self.path})" if logged else "")
