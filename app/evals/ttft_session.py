"""Time to the first token of an interactive session's first turn, without and with priming.

    python -m app.evals.ttft_session [--files 12] [--lines 100] [--think 25] [--typed 6] [--runs 2] [--out F.json]

A fresh git repository of ``--files`` Python modules is opened by the session layer the TUI and
``--plain`` use (app.controller.ModelSession, on the configured engine loaded in this process);
the user "types" for ``--think`` seconds, then asks about one module by name (so its text is
attached to the message). Cases: ``off`` (prime = false); ``open`` (the conversation is computed
once the session opens); ``typed`` (that, and the message is reported typed ``--typed`` seconds
before it is sent, as the TUI reports every keystroke). The turn is cancelled at its first token.
Saved prefix states are removed before every case, so each opens like a first session in a new
repository. Reported per case: the engine's request-to-first-token time, the wall time from
sending the message to its first streamed text, the prompt's tokens and how many the request
found computed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from app.config import load_config
from app.controller.model_session import ModelSession, SessionSetup
from app.evals.ttft import sample_file
from app.events import AssistantDelta, EngineStatsEvent
from engine.paths import cache_dir
from tools.permissions_types import ApprovalDecision


def _workspace(files: int, lines: int, salt: str) -> Path:
    work = Path(tempfile.mkdtemp(prefix="tau-ttft-session-"))
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    for i in range(files):
        (work / f"module{i}.py").write_text(sample_file(lines, f"{salt}M{i}"), encoding="utf-8")
    return work


QUESTION = "What is module0.py for? One sentence."
CASES = ("off", "open", "typed")


def _case(work: Path, case: str, think: float, typed: float) -> dict:
    cfg = load_config().with_overrides(prime=case != "off", local=True)
    first_text = threading.Event()
    stats: list = []

    def on_event(ev: object) -> None:
        if isinstance(ev, AssistantDelta) and ev.text:
            first_text.set()
        elif isinstance(ev, EngineStatsEvent) and ev.final:
            stats.append(ev.stats)

    log = work / ".tau-session.log"
    session = ModelSession(cfg, work, SessionSetup(persist=False), on_event=on_event,
                           approver=lambda r: ApprovalDecision(False, note="measuring"), log_path=log)
    problem = session.open(lambda p: None)
    if problem is not None:
        raise SystemExit(problem.message)
    try:
        t_open = time.perf_counter()
        prime_s = None
        typing = case == "typed"
        while time.perf_counter() - t_open < think:  # the user types
            if prime_s is None and session.primed is not None and not session.primed.is_alive():
                prime_s = time.perf_counter() - t_open
            if typing and time.perf_counter() - t_open >= think - typed:
                session.typing(QUESTION)  # the last keystroke
                typing = False
            time.sleep(0.05)
        t0 = time.perf_counter()
        turn = session.start_turn(QUESTION)
        first_text.wait(600)
        wall = time.perf_counter() - t0
        session.cancel()
        turn.wait(600)
    finally:
        session.close()
    s = stats[0] if stats else None
    return {"case": case, "prime_s": round(prime_s, 2) if prime_s is not None else None,
            "first_token_s": round(s.first_token_s, 2) if s else None, "first_text_wall_s": round(wall, 2),
            "prompt_tokens": s.prompt_tokens if s else None, "reused_tokens": s.reused_tokens if s else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.evals.ttft_session", description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=12)
    ap.add_argument("--lines", type=int, default=100)
    ap.add_argument("--think", type=float, default=25.0, help="seconds between opening and the first message")
    ap.add_argument("--typed", type=float, default=6.0, help="the typed case: seconds between the last keystroke and sending")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--out", default="ttft-session.json")
    args = ap.parse_args(argv)
    prefix_dir = cache_dir() / "prefix"
    rows = []
    for run in range(args.runs):
        for i, case in enumerate(CASES):
            work = _workspace(args.files, args.lines, f"R{run}{i}")
            shutil.rmtree(prefix_dir, ignore_errors=True)
            rows.append({"run": run, **_case(work, case, args.think, args.typed)})
            print(json.dumps(rows[-1]), flush=True)
            shutil.rmtree(work, ignore_errors=True)
    summary = {}
    for case in CASES:
        mine = [r for r in rows if r["case"] == case]
        summary[case] = {
            k: round(statistics.median(r[k] or 0 for r in mine), 2)
            for k in ("first_token_s", "first_text_wall_s", "prompt_tokens", "reused_tokens")}
    Path(args.out).write_text(json.dumps({"args": vars(args), "rows": rows, "summary": summary}, indent=1))
    print("| case | prompt tokens | computed ahead | first token (median) | message to first text |\n|---|---|---|---|---|")
    for case, s in summary.items():
        print(f"| {case} | {s['prompt_tokens']:.0f} | {s['reused_tokens']:.0f} | {s['first_token_s']:.2f} s "
              f"| {s['first_text_wall_s']:.2f} s |")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
