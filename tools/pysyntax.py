"""Whether a Python file's text parses: the one check an edit can make without running code."""

from __future__ import annotations

import ast


def syntax_error(text: str) -> str | None:
    """Why Python cannot parse ``text`` ("line N: message"), or None when it can."""
    try:
        ast.parse(text)
    except SyntaxError as e:
        return f"line {e.lineno}: {e.msg}"
    except ValueError as e:  # a NUL byte
        return str(e)
    return None


def broke_python(path: str, old: str | None, new: str) -> str | None:
    """The parse error of ``new`` when ``path`` is a Python file that ``old`` (None: a new file)
    left parsable; else None (a file already broken is not held to it)."""
    if not path.endswith(".py") or (old is not None and syntax_error(old) is not None):
        return None
    return syntax_error(new)
