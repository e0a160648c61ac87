"""``tau sessions [ID]``: list saved sessions, or print one conversation."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from app.cli.main import UsageError
from app.config import Config
from app.session import SessionNotFound, load_session, problem_line, scan_sessions


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("sessions", help="list saved sessions, or show one (tau --resume ID continues it)")
    p.add_argument("id", nargs="?", help="a session id (or unique prefix, or 'latest') to print")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("-n", "--limit", type=int, default=20, help="sessions to list (default 20, 0 = all)")
    p.set_defaults(func=run)


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def run(args: argparse.Namespace, cfg: Config) -> int:
    if args.id:
        try:
            messages, info = load_session(args.id)
        except SessionNotFound as e:
            raise UsageError(str(e)) from None
        if info.problems:
            print(f"tau: {problem_line(info)}", file=sys.stderr)
        if args.json:
            print(json.dumps({"id": info.id, "workspace": info.workspace, "messages": messages}, default=str))
            return 0
        print(f"session {info.id}  {info.workspace}  {info.model}  {_when(info.updated)}")
        for m in messages:
            if m.get("role") == "system":
                continue
            text = str(m.get("content") or "")
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function", tc)
                text += f"\n  [{fn.get('name')} {json.dumps(fn.get('arguments'))[:200]}]"
            if m.get("role") == "tool" and len(text) > 400:
                text = text[:400] + " ..."
            print(f"\n{m.get('role')}: {text.strip()}")
        return 0
    infos, problems = scan_sessions()
    for line in problems:  # one line per bad file; the listing goes on without it
        print(f"tau: {line}", file=sys.stderr)
    if args.limit > 0:
        infos = infos[: args.limit]
    if args.json:
        print(json.dumps([
            {"id": i.id, "workspace": i.workspace, "model": i.model, "mode": i.mode, "created": i.created,
             "updated": i.updated, "messages": i.messages, "title": i.title, "path": str(i.path)}
            for i in infos
        ]))
        return 0
    if not infos:
        print("no sessions yet")
        return 0
    for i in infos:
        print(f"{i.id}  {_when(i.updated)}  {i.messages:3d} msgs  {i.workspace}  {i.title[:50]}")
    print("\ncontinue one with: tau --resume ID")
    return 0
