"""``tau`` with no subcommand: the full-screen TUI, or the line interface with ``--plain``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.config import Config


def workspace_root(start: Path | None = None) -> Path:
    """The git repository around ``start`` (the current directory), or ``start`` itself."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    return here


def run(args: argparse.Namespace, cfg: Config) -> int:
    root = workspace_root()
    resume = getattr(args, "resume", None)
    if getattr(args, "plain", False):
        from app import plain

        return plain.run(cfg, root=root, resume=resume)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("tau: the interactive session needs a terminal; use `tau run` for scripts", file=sys.stderr)
        return 2
    from app.tui import create_app

    app = create_app(cfg, root=root, resume=resume)
    try:
        code = app.run()
    finally:
        app.session.close()
    return int(code or 0)
