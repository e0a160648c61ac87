"""Lenient JSON for small models: trailing commas, single quotes, Python literals, missing closers."""

from __future__ import annotations

import json
import re
from typing import Any

_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}


def _requote(text: str) -> str:
    """Turn single-quoted strings into double-quoted ones and Python literals into JSON ones.

    Walks the text once, tracking string state, so quotes and words inside strings survive.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            quote = c
            j = i + 1
            buf: list[str] = []
            while j < n and text[j] != quote:
                if text[j] == "\\" and j + 1 < n:
                    nxt = text[j + 1]
                    buf.append(nxt if (quote == "'" and nxt == "'") else "\\" + nxt)
                    j += 2
                    continue
                ch = text[j]
                if quote == "'" and ch == '"':
                    buf.append('\\"')
                elif ch == "\n":
                    buf.append("\\n")
                elif ch == "\t":
                    buf.append("\\t")
                else:
                    buf.append(ch)
                j += 1
            out.append('"' + "".join(buf) + '"')
            i = j + 1
            continue
        m = re.match(r"[A-Za-z_]+", text[i:])
        if m:
            word = m.group(0)
            out.append(_PY_LITERALS.get(word, word))
            i += len(word)
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _close(text: str) -> str:
    """Drop trailing commas and append the closers of unclosed strings, arrays and objects."""
    stack: list[str] = []
    in_str = False
    esc = False
    for c in text:
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
        elif c in "}]" and stack:
            stack.pop()
    if in_str:
        text += '"'
    text = text.rstrip()
    text = re.sub(r",\s*$", "", text)
    return text + "".join(reversed(stack))


def _strip_trailing_commas(text: str) -> str:
    return re.sub(r",(\s*[}\]])", r"\1", text)


def loads_lenient(text: str) -> Any:
    """``json.loads`` that also accepts the usual small-model mistakes. Raises ValueError."""
    text = text.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    fixed = _strip_trailing_commas(_close(_requote(text)))
    try:
        return json.loads(fixed)
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
