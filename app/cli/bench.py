"""``tau bench``: plain vs every speculative configuration, side by side, as ratios."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

from app.cli.main import UsageError, add_model_flags
from app.config import Config

if TYPE_CHECKING:
    from engine.local import LocalEngine


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="benchmark plain vs speculative decoding on built-in workloads")
    p.add_argument("--suite", default="full", help="quick | edits | new | agent | full (default: full)")
    p.add_argument("--modes", default="greedy,sampled", help="comma list of greedy, sampled (T 0.6, top-p 0.95, tau's order) and "
                   "sampled-llama (llama-server's chain and defaults on both sides)")
    p.add_argument("--configs", default="", help="comma list of configurations (default: all)")
    p.add_argument("--synthetic", metavar="SHAPE", help="benchmark a random-weight model of a named shape instead")
    p.add_argument("--rounds", type=int, default=1,
                   help="run every group this many times (order rotated, sampled seeds varied) and pool them")
    p.add_argument("--paired", action="store_true",
                   help="run every request in plain and the one other configuration back to back (the long "
                        "suite: per-request ratios two runs a few seconds apart, not half an hour)")
    p.add_argument("--requests", metavar="I,J,...",
                   help="only these requests (0-based) of the suite's multi-request workloads, e.g. a long "
                        "run's outliers over more rounds")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--out", help="also write the JSON results to this file")
    p.add_argument("--peer-server", metavar="PATH",
                   help="llama-server binary or its bin dir: run its plain, ngram-map-k4v, ngram-mod and draft "
                        "configurations on the same workloads and report ratios against it")
    p.add_argument("--plain-duel", type=int, metavar="PAIRS", default=0,
                   help="with --peer-server: only tau plain and llama-server plain, taking turns PAIRS times per "
                        "workload and mode (order flipped every pair), so drift cannot favour either side")
    p.add_argument("--duel-tokens", type=int, metavar="N", default=200,
                   help="tokens a duel run decodes at most (default 200: pairs seconds apart; 0: the workload's)")
    add_model_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, cfg: Config) -> int:
    from app.progress import ProgressBar

    if args.synthetic:
        try:
            from engine.lab.gpu.synthetic_bench import main as synth_main
        except ImportError:
            raise UsageError("synthetic benchmarks are not available in this build") from None
        return int(synth_main([args.synthetic] + (["--json"] if args.json else [])))

    from engine.lab.bench import CONFIGS, MODES, run_bench, select_requests
    from engine.lab.benchdata.workloads import SUITES
    from engine.lab.benchreport import format_peer_table, format_table, results_json
    from engine.lab.peer_server import find_server

    if args.suite not in SUITES:
        raise UsageError(f"unknown suite {args.suite!r}: one of {', '.join(SUITES)}")
    modes = tuple(m for m in args.modes.split(",") if m)
    if not modes or any(m not in MODES for m in modes):
        raise UsageError(f"--modes takes a comma list of {', '.join(MODES)}")
    if args.rounds < 1:
        raise UsageError("--rounds takes a positive number")
    names = {c.name for c in CONFIGS}
    if args.paired and len([c for c in args.configs.split(",") if c and c != "plain"]) != 1:
        raise UsageError("--paired takes --configs plain,CONFIG with one tau configuration beside plain")
    configs = tuple(c for c in args.configs.split(",") if c) or None
    if configs and any(c not in names for c in configs):
        raise UsageError(f"unknown configuration; known: {', '.join(sorted(names))}")
    workloads = None
    if args.requests:
        if args.peer_server:
            raise UsageError("--requests runs tau's configurations only, not with --peer-server")
        try:
            picks = [int(x) for x in args.requests.split(",") if x.strip()]
        except ValueError:
            raise UsageError(f"--requests takes numbers: {args.requests!r}") from None
        if not picks:
            raise UsageError("--requests takes a comma list of request numbers")
        try:
            workloads = select_requests(SUITES[args.suite], picks)
        except ValueError as e:
            raise UsageError(str(e)) from None
    try:
        server = find_server(args.peer_server) if args.peer_server else None
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.plain_duel:
        if server is None:
            raise UsageError("--plain-duel needs --peer-server: it runs tau plain beside llama-server plain")
        if args.plain_duel < 1 or args.duel_tokens < 0:
            raise UsageError("--plain-duel takes a positive number of pairs, --duel-tokens zero or more")
        if configs or args.paired or args.rounds > 1 or workloads is not None:
            raise UsageError("--plain-duel runs plain on both sides only: no --configs, --paired, --rounds or --requests")
        return _duel(args, cfg, server, modes)
    # a configuration drafting with the model measures it even where auto would not load it
    engine = _open(cfg, draft_always=configs is None or any(c.needs_draft for c in CONFIGS if c.name in configs))
    if engine is None:
        return 1
    try:
        if server is not None:
            from engine.lab.benchpeer import run_beside_llama_server

            results = run_beside_llama_server(engine, server, args.suite, modes, configs, args.rounds, args.paired,
                                              progress=ProgressBar(),
                                              log_dir=Path(args.out).parent if args.out else None)
        else:
            results = run_bench(engine, args.suite, modes, configs, progress=ProgressBar(), rounds=args.rounds,
                                paired=args.paired, workloads=workloads)
    finally:
        engine.close()
    data = results_json(engine, args.suite, args.rounds, results)
    if args.out:
        Path(args.out).write_text(json.dumps(data, indent=1))
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print(format_table(results))
        if data["peer"]:
            print("\n" + format_peer_table(results))
        s = data["summary"]
        print(f"\ngreedy runs identical to plain: {s['greedy_runs_identical_to_plain']}/{s['greedy_runs_compared']}, "
              f"the others part at a near-tie: {s['greedy_differences_at_near_ties']}; "
              f"rejections at near-ties: {s['near_tie_divergences']}")
    return 0


def _open(cfg: Config, draft_always: bool) -> LocalEngine | None:
    """The local engine, or None after a one-line error."""
    from app.engines.factory import EngineOpenError, load_local
    from app.progress import ProgressBar

    try:
        return cast("LocalEngine", load_local(cfg, progress=ProgressBar(), draft_always=draft_always))
    except EngineOpenError as e:
        print(f"tau: {e}", file=sys.stderr)
        return None


def _duel(args: argparse.Namespace, cfg: Config, server: Path, modes: tuple[str, ...]) -> int:
    from app.progress import ProgressBar
    from engine.lab.benchdata.workloads import SUITES
    from engine.lab.plainduel import format_duels, overall, plain_duel

    engine = _open(cfg, draft_always=False)
    if engine is None:
        return 1
    try:
        duels = plain_duel(engine, server, SUITES[args.suite], modes, args.plain_duel, args.duel_tokens,
                           progress=ProgressBar(), log_dir=Path(args.out).parent if args.out else None)
    finally:
        engine.close()
    total = overall(duels)  # one bootstrap for the JSON and the table
    data = {"suite": args.suite, "model": engine.info.name, "backend": engine.info.backend,
            "pairs": args.plain_duel, "duels": [d.to_json() for d in duels], "overall": total.to_json()}
    if args.out:
        Path(args.out).write_text(json.dumps(data, indent=1))
    print(json.dumps(data, indent=1) if args.json else format_duels(duels, total))
    return 0
