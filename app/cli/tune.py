"""``tau tune``: measure the engine's settings on your own workload and save the best.

Sweeps drafter on/off, the window limit, the n-gram key length and the thread count on
edit tasks built from the repository's files and turns of your recent sessions (or a
built-in edit workload when there are none), greedy and sampled, then writes the choice
into the engine's profile for this model and machine, which later loads apply.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.cli.main import UsageError, add_model_flags
from app.config import Config


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tune", help="measure the engine's settings on your workload and save the fastest")
    p.add_argument("--repo", default=".", help="repository whose files make the edit workload (default: .)")
    p.add_argument("--no-sessions", action="store_true", help="do not replay turns of recent sessions")
    p.add_argument("--jobs", type=int, default=2, help="workload items (default 2)")
    p.add_argument("--tokens", type=int, default=64, help="tokens generated per run (default 64)")
    p.add_argument(
        "--modes", default="greedy,sampled", help="greedy,sampled (sampled: temperature 0.6, top-p 0.95)"
    )
    p.add_argument(
        "--threads-options",
        dest="threads_options",
        help="thread counts to try, e.g. 2,1 (default: derived from the cores)",
    )
    p.add_argument("--quick", action="store_true", help="only drafter on/off and the window limit")
    p.add_argument(
        "--min-gain",
        dest="min_gain",
        type=float,
        default=3.0,
        help="percent a setting must win by (default 3)",
    )
    p.add_argument("--dry-run", action="store_true", help="measure and print, but do not save the profile")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_model_flags(p)
    p.set_defaults(func=run)


def _recent_conversations(limit: int = 5) -> list[list[dict]]:
    try:
        from app.session import list_sessions, load_session
    except ImportError:  # pragma: no cover
        return []
    convs: list[list[dict]] = []
    try:
        infos = sorted(list_sessions(), key=lambda i: i.updated, reverse=True)[:limit]
    except Exception:  # noqa: BLE001 - a broken sessions dir must not stop tuning
        return []
    for info in infos:
        try:
            messages, _ = load_session(info.id)
        except Exception:  # noqa: BLE001
            continue
        if messages:
            convs.append(messages)
    return convs


def run(args: argparse.Namespace, cfg: Config) -> int:
    from app.engines.factory import EngineOpenError, engine_config
    from app.progress import ProgressBar
    from engine.lab import tune

    if args.jobs < 1 or args.tokens < 8:
        raise UsageError("--jobs must be at least 1 and --tokens at least 8")
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    if not modes or any(m not in tune.MODES for m in modes):
        raise UsageError("--modes takes greedy and/or sampled")
    threads = None
    if args.threads_options:
        try:
            threads = [int(x) for x in args.threads_options.split(",") if x.strip()]
        except ValueError:
            raise UsageError("--threads-options takes numbers, e.g. 2,1") from None
    repo = Path(args.repo)
    if not repo.is_dir():
        raise UsageError(f"--repo {args.repo} is not a directory")
    bar = ProgressBar()
    try:
        ecfg = engine_config(cfg, bar)
        from engine.local import LocalEngine

        engine = LocalEngine.load(ecfg, progress=bar)
    except EngineOpenError as e:
        print(f"tau: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - one line, no traceback
        print(
            f"tau: cannot load {ecfg.model_path if 'ecfg' in locals() else 'the model'}: {e}", file=sys.stderr
        )
        return 1
    try:
        convs = [] if args.no_sessions else _recent_conversations()
        jobs = tune.collect_jobs(repo, convs, max_tokens=args.tokens, n_jobs=args.jobs)
        tuner = tune.Tuner(engine, jobs, modes=modes, progress=bar)
        result = tune.sweep(tuner, min_gain=args.min_gain / 100, threads=threads, quick=args.quick)
        bar("tune: done", 1.0)
        if not args.dry_run:
            path = tune.save_tuned(engine.profile_file, result)
            result.profile = str(path or "")
    finally:
        engine.close()
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        print(tune.format_result(result))
        if result.profile:
            print(f"saved to {result.profile}")
        elif args.dry_run:
            print("(dry run: nothing saved)")
    return 0
