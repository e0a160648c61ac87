"""tau's full-screen terminal UI (Textual). The only package in tau that imports ``textual``.

``create_app`` is the app factory shared by the CLI and the tests. The package itself is
imported lazily so that ``app.tui.statsfmt`` / ``app.tui.commands`` (plain Python, used by
the ``--plain`` interface too) do not pull Textual in.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from app.tui.app import create_app

        return create_app
    raise AttributeError(name)
