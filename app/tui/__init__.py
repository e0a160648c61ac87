"""tau's full-screen terminal UI (Textual). The only package in tau that imports ``textual``.

It renders the session layer (app.controller) and forwards to it. ``create_app`` is the
app factory shared by the CLI and the tests; it is imported lazily, so that importing the
package (``tau --help``) does not load Textual.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from app.tui.app import create_app

        return create_app
    raise AttributeError(name)
