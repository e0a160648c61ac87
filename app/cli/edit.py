"""``tau edit FILE... "instruction"``: one edit through SEARCH/REPLACE blocks, shown as a diff.

Exit status: 0 the edit was applied; 1 no applicable edit (or not approved); 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.agent.direct_edit import EditError, plan_edit, write_changes
from app.cli.main import UsageError, add_model_flags
from app.config import Config
from app.controller.opening import open_engine
from app.diffview import render_diff


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("edit", help="edit files with one instruction (SEARCH/REPLACE), show the diff")
    p.add_argument("args", nargs="*", metavar="FILE... INSTRUCTION", help="files to edit, then the instruction")
    p.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    p.add_argument("--json", action="store_true", help="print one JSON object {files, diff, applied, stats}")
    p.add_argument("--retries", type=int, default=1, help="times to resend blocks that did not apply (default 1)")
    add_model_flags(p)
    p.set_defaults(func=run)


def _confirm(question: str) -> bool:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    try:
        answer = input(question)
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def run(args: argparse.Namespace, cfg: Config) -> int:
    if len(args.args) < 2:
        raise UsageError('usage: tau edit FILE... "instruction"')
    *paths, instruction = args.args
    if not instruction.strip():
        raise UsageError("the instruction is empty")
    root = Path.cwd()
    for p in paths:
        if not (root / p).is_file():
            raise UsageError(f"no such file: {p}")
    try:
        engine = open_engine(cfg, lambda msg: print(f"tau: {msg}", file=sys.stderr), getattr(args, "local", False))
    except RuntimeError as e:  # EngineOpenError: one line for the user
        print(f"tau: {e}", file=sys.stderr)
        return 1
    try:
        try:
            live = sys.stderr.isatty() and not args.json

            def show(text: str) -> None:  # the model's reply as it streams, dimmed, on a terminal
                sys.stderr.write(f"\x1b[2m{text}\x1b[0m")
                sys.stderr.flush()

            outcome = plan_edit(engine, root, paths, instruction, retries=max(0, args.retries),
                                on_text=show if live else None)
            if live:
                sys.stderr.write("\n")
        except EditError as e:
            raise UsageError(str(e)) from None
    finally:
        engine.close()
    applied = False
    if not args.json:
        if outcome.changes:
            sys.stdout.write(render_diff(outcome.diff, sys.stdout))
            sys.stdout.flush()
        for f in outcome.failures:
            print(f"tau: block not applied: {f.splitlines()[0]}", file=sys.stderr)
    if outcome.changes and (args.yes or (not args.json and _confirm("Apply these changes? [y/N] "))):
        write_changes(root, outcome.changes)
        applied = True
    stats = outcome.stats.to_dict() if outcome.stats else {}
    stats["generations"] = outcome.generations
    if args.json:
        print(json.dumps({
            "files": [c.path for c in outcome.changes],
            "diff": outcome.diff,
            "applied": applied,
            "failures": outcome.failures,
            "stats": stats,
        }))
    elif not outcome.changes:
        print("tau: the model produced no applicable edit", file=sys.stderr)
    elif applied:
        print(f"tau: applied to {', '.join(c.path for c in outcome.changes)}", file=sys.stderr)
    else:
        print("tau: not applied (pass --yes to apply without asking)", file=sys.stderr)
    return 0 if applied else 1
