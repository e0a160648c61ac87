"""Text made safe to show at an approval: control characters become visible escapes.

A terminal obeys control codes in what it prints: ``\\x1b[2K\\x1b[G`` erases the line shown so
far, a bidi override reorders it. Whatever a user approves must read as what will run, so
C0 and C1 controls (except newline and tab), DEL and the bidi embeddings, overrides and
isolates are shown as escapes (``\\x1b``, ``\\u202e``) instead of being obeyed.
"""

from __future__ import annotations

import re

_BIDI = "\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
_OTHER = "\u2028\u2029\ufeff\ud800-\udfff"  # line separators, BOM, lone surrogates (unprintable)
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}{_OTHER}]")
_UNSAFE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}{_OTHER}]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab shown as an escape (pure)."""
    return _UNSAFE.sub(_escape, text)


def visible_line(text: str) -> str:
    """``visible`` for a one-line field: newlines and tabs are escaped too (pure)."""
    return _UNSAFE_LINE.sub(_escape, text)


def visible_opt(text: str | None) -> str | None:
    return None if text is None else visible(text)
