"""``tau run "task"``: a headless agent run.

Plain output prints the final answer (progress on stderr); ``--json`` streams one JSON event
per line (``app.events.event_to_dict``). Mode defaults to auto-edit: edits apply, shell
commands are denied unless ``--mode full-auto``. A check (``--check``, a test command the task
or AGENTS.md names, or the workspace's tests) judges the run (app.agent.checks). Exit status:
0 finished and the check (where there is one) passed after the last edit; 1 failed, hit a
limit or the check fails; 2 bad usage; 130 interrupted (Ctrl-C cancels, a second aborts).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

from app.agent import Agent
from app.cli.main import UsageError, add_model_flags, add_shell_flags
from app.config import Config
from app.controller.opening import open_engine
from app.events import AgentEvent, Final, Notice, ToolCallEvent, ToolResultEvent, event_to_dict
from app.session import Session
from engine.types import CancelToken
from tools.permissions_types import deny_all

EXIT = {"done": 0, "failed": 1, "limit": 1, "cancelled": 130}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("run", help="run the agent headless on one task")
    p.add_argument("task", nargs="?", help="the task ('-' reads it from stdin)")
    p.add_argument("--json", action="store_true", help="stream JSONL events on stdout")
    p.add_argument("--max-steps", dest="max_steps", type=int, help="model steps before giving up")
    p.add_argument("--mode", dest="run_mode", choices=["auto-edit", "full-auto"], help="permission mode (default auto-edit)")
    p.add_argument("--check", metavar="CMD", help="the command that says the task is done (default: named in the "
                   "task or AGENTS.md, else the workspace's tests: pytest, npm test, go test, cargo test)")
    p.add_argument("--session", dest="session_id", metavar="ID", help="continue a saved session ('latest' for the newest)")
    add_model_flags(p)
    add_shell_flags(p)
    p.set_defaults(func=run)


def _read_task(args: argparse.Namespace) -> str:
    task = args.task
    if task == "-":
        task = sys.stdin.read()
    if not task or not task.strip():
        raise UsageError('usage: tau run "task" (or - to read the task from stdin)')
    return task.strip()


class _Printer:
    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def __call__(self, ev: AgentEvent) -> None:
        if self.as_json:
            sys.stdout.write(json.dumps(event_to_dict(ev), ensure_ascii=False, default=str) + "\n")
            sys.stdout.flush()
        elif isinstance(ev, ToolCallEvent):
            arg = next((str(v) for v in ev.arguments.values() if isinstance(v, str)), "")
            print(f"> {ev.name} {arg.splitlines()[0][:80] if arg else ''}", file=sys.stderr)
        elif isinstance(ev, ToolResultEvent) and not ev.ok:
            print(f"  {ev.name} failed: {ev.output.splitlines()[0][:120] if ev.output else ''}", file=sys.stderr)
        elif isinstance(ev, Notice):
            print(f"tau: {ev.message}", file=sys.stderr)


def run(args: argparse.Namespace, cfg: Config) -> int:
    task = _read_task(args)
    if args.max_steps is not None and args.max_steps < 1:
        raise UsageError("--max-steps must be at least 1")
    mode = args.run_mode or (cfg.mode if cfg.mode in ("auto-edit", "full-auto") else "auto-edit")
    cfg = cfg.with_overrides(mode=mode, max_steps=args.max_steps)
    printer = _Printer(args.json)
    session = None
    if args.session_id:
        from app.session import SessionNotFound

        try:
            session = Session.resume(args.session_id)
        except SessionNotFound as e:
            raise UsageError(str(e)) from None

    def notify(msg: str) -> None:
        printer(Notice(msg)) if args.json else print(f"tau: {msg}", file=sys.stderr)

    if session is not None and session.report:  # lines of a damaged session file were skipped
        notify(session.report)

    try:
        engine = open_engine(cfg, notify, getattr(args, "local", False))
    except RuntimeError as e:  # EngineOpenError: one line for the user
        print(f"tau: {e}", file=sys.stderr)
        return 1
    cancel = CancelToken()

    def on_sigint(_sig: int, _frame: object) -> None:
        if cancel.cancelled:
            raise KeyboardInterrupt
        cancel.cancel()

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        agent = Agent(engine, Path.cwd(), config=cfg, approver=deny_all, on_event=printer, session=session,
                      insist=True, check=getattr(args, "check", None))
        final: Final = agent.run_turn(task, cancel)
        agent.session.close()
    finally:
        signal.signal(signal.SIGINT, old)
        engine.close()
    if not args.json:
        if final.status == "done":
            print(final.message)
            if final.check:
                print(f"tau: {final.reason}", file=sys.stderr)
        else:
            print(f"tau: {final.status}: {final.reason or final.message}", file=sys.stderr)
    return EXIT.get(final.status, 1)
