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


_KEY = re.compile(r'"[\w.-]*"\s*:')
# a value's closing quote: only closers follow to the end, or a comma and the next key
_VALUE_END = re.compile(r'(?:\s*[}\]])*\s*$|\s*,\s*"[\w-]+"\s*:')


def _escape_inner_quotes(text: str) -> str:
    """Escape the double quotes a model wrote raw inside string values (a file's content with
    triple-quoted docstrings or ``d["key"]`` in a write_file call): a value's quote closes it
    only where the object goes on with its next key or ends; raw newlines and tabs are escaped."""
    out: list[str] = []
    in_str = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if not in_str:
            key = _KEY.match(text, i) if c == '"' else None
            if key:
                out.append(key.group(0))
                i = key.end()
                continue
            in_str = c == '"'
            out.append(c)
        elif c == "\\" and i + 1 < n:
            out.append(text[i : i + 2])
            i += 2
            continue
        elif c == '"':
            if _VALUE_END.match(text, i + 1):
                in_str = False
                out.append(c)
            else:
                out.append('\\"')
        else:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(c, c))
        i += 1
    return "".join(out)


def loads_lenient(text: str, raw_quotes: bool = True) -> Any:
    """``json.loads`` that also accepts the usual small-model mistakes. Raises ValueError.
    ``raw_quotes``: also try reading quotes written raw inside string values (last, since two
    objects one after the other would read as one)."""
    text = text.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    fixed = _strip_trailing_commas(_close(_requote(text)))
    try:
        return json.loads(fixed)
    except json.JSONDecodeError as e:
        error = ValueError(f"invalid JSON ({e.msg} at line {e.lineno} column {e.colno})")
    if raw_quotes:
        try:  # last: quotes written raw inside a string value
            return json.loads(_strip_trailing_commas(_close(_escape_inner_quotes(text))))
        except json.JSONDecodeError:
            pass
    raise error
