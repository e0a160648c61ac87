"""``tau edit FILE... "instruction"``: one edit (whole files or SEARCH/REPLACE blocks, by size),
shown as a diff; ``--check CMD`` runs a command after applying and reports whether it passed.

Exit status: 0 the edit was applied (and the check passed); 1 no applicable edit, not
approved, or the check failed; 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.agent.checks import tail
from app.agent.direct_edit import EditError, plan_edit, write_changes
from app.agent.editformat import SEARCH_REPLACE, WHOLE
from app.agent.example_run import ExampleReport
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
    p.add_argument("--check", metavar="CMD", help="run CMD after applying (e.g. 'pytest -q'); exit 1 if it fails")
    p.add_argument("--edit-format", dest="edit_format", choices=["auto", WHOLE, SEARCH_REPLACE], default="auto",
                   help="whole-file rewrite or SEARCH/REPLACE blocks (default auto: whole for small files)")
    p.add_argument("--no-examples", dest="examples", action="store_false",
                   help="do not run the changed functions' docstring examples (run sandboxed, failures sent back)")
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


CHECK_TIMEOUT_S = 600


def _examples_json(report: ExampleReport | None) -> dict[str, Any] | None:
    if report is None:
        return None
    return {"ran": report.ran, "passed": report.passed, "total": len(report.results),
            "failed": [r.describe() for r in report.failed], "error": report.error or None}


def _examples_line(report: ExampleReport) -> str:
    if not report.ran:
        return f"docstring examples not run: {report.error}"
    if report.error:
        return f"docstring examples: {report.error}"
    if report.ok:
        return f"docstring examples: {report.passed}/{len(report.results)} hold"
    return (f"docstring examples: {len(report.failed)} of {len(report.results)} do not hold: "
            + "; ".join(r.describe() for r in report.failed[:3]))


def run_check(command: str, root: Path) -> dict[str, Any]:
    """Run the user's check command in ``root``: its exit code, whether it passed, its output's tail."""
    from tools.process import run_process

    result = run_process(command, root, timeout=CHECK_TIMEOUT_S)
    passed = result.exit_code == 0 and not result.timed_out
    return {"command": command, "ran": True, "passed": passed, "exit_code": result.exit_code,
            "timed_out": result.timed_out, "output_tail": tail(result.output)}


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

            fmt = None if getattr(args, "edit_format", "auto") == "auto" else args.edit_format
            outcome = plan_edit(engine, root, paths, instruction, retries=max(0, args.retries),
                                on_text=show if live else None, edit_format=fmt,
                                examples=getattr(args, "examples", True))
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
    check: dict[str, Any] | None = None
    if getattr(args, "check", None):
        check = run_check(args.check, root) if applied else {"command": args.check, "ran": False, "passed": None}
    stats = outcome.stats.to_dict() if outcome.stats else {}
    stats["generations"] = outcome.generations
    if args.json:
        print(json.dumps({
            "files": [c.path for c in outcome.changes],
            "diff": outcome.diff,
            "applied": applied,
            "failures": outcome.failures,
            "edit_format": outcome.edit_format,
            "check": check,
            "examples": _examples_json(outcome.examples),
            "stats": stats,
        }))
    elif not outcome.changes:
        print("tau: the model produced no applicable edit", file=sys.stderr)
    elif applied:
        print(f"tau: applied to {', '.join(c.path for c in outcome.changes)}", file=sys.stderr)
    else:
        print("tau: not applied (pass --yes to apply without asking)", file=sys.stderr)
    if outcome.examples is not None and not args.json:
        print(f"tau: {_examples_line(outcome.examples)}", file=sys.stderr)
    if check is not None and check["ran"] and not args.json:
        verdict = "passed" if check["passed"] else f"FAILED (exit code {check['exit_code']})"
        print(f"tau: check `{check['command']}` {verdict}", file=sys.stderr)
        if not check["passed"]:
            print(check["output_tail"], file=sys.stderr)
    return 0 if applied and (check is None or check["passed"]) else 1
