"""tau plain beside llama-server plain, interleaved run by run (``tau bench --plain-duel N``).

A shared 2-core VM drifts by 10-25% over minutes, more than the gap in question (is tau's plain
decode at least 0.98x llama-server's?), and a bench block puts minutes between the two plain
runs it compares. Here one llama-server stays up and the two sides take turns on the same
workload, mode and token budget, the order flipping every pair (tau first, then llama-server
first), so each pair's ratio compares two runs seconds apart and drift in either direction
favours neither side. A warm-up run on each side is not counted.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from engine.lab.bench import CONFIGS, run_config
from engine.lab.benchdata.workloads import Workload
from engine.lab.benchpeer import ask_server
from engine.lab.peer_server import LlamaServer, peer_configs

AT_LEAST = 0.98  # the bar for tau plain / llama-server plain


@dataclass(frozen=True)
class DuelPair:
    tau_tokens: int
    tau_s: float
    llama_tokens: int
    llama_s: float
    tau_first: bool

    @property
    def ratio(self) -> float:
        """tau plain's decode tok/s over llama-server plain's, this pair."""
        if not (self.tau_s and self.llama_s and self.llama_tokens):
            return 0.0
        return (self.tau_tokens / self.tau_s) / (self.llama_tokens / self.llama_s)


@dataclass(frozen=True)
class Duel:
    workload: str
    mode: str
    max_tokens: int
    pairs: tuple[DuelPair, ...]

    @property
    def tau_tok_s(self) -> float:
        s = sum(p.tau_s for p in self.pairs)
        return sum(p.tau_tokens for p in self.pairs) / s if s else 0.0

    @property
    def llama_tok_s(self) -> float:
        s = sum(p.llama_s for p in self.pairs)
        return sum(p.llama_tokens for p in self.pairs) / s if s else 0.0

    @property
    def pooled(self) -> float:
        """Every pair's tokens over every pair's seconds, per side."""
        return self.tau_tok_s / self.llama_tok_s if self.llama_tok_s else 0.0

    @property
    def median(self) -> float:
        return statistics.median(p.ratio for p in self.pairs) if self.pairs else 0.0

    def at_least(self, bar: float = AT_LEAST) -> int:
        return sum(p.ratio >= bar for p in self.pairs)

    @classmethod
    def from_json(cls, d: dict) -> Duel:
        pairs = tuple(DuelPair(int(p["tau_tokens"]), float(p["tau_s"]), int(p["llama_tokens"]), float(p["llama_s"]),
                               bool(p["tau_first"])) for p in d["pairs"])
        return cls(str(d["workload"]), str(d["mode"]), int(d["max_tokens"]), pairs)

    def to_json(self) -> dict:
        return {
            "workload": self.workload, "mode": self.mode, "max_tokens": self.max_tokens,
            "tau_tok_s": round(self.tau_tok_s, 2), "llama_tok_s": round(self.llama_tok_s, 2),
            "pooled": round(self.pooled, 4), "median": round(self.median, 4),
            "pairs_at_least": self.at_least(), "bar": AT_LEAST,
            "pairs": [{"tau_tokens": p.tau_tokens, "tau_s": round(p.tau_s, 4), "llama_tokens": p.llama_tokens,
                       "llama_s": round(p.llama_s, 4), "tau_first": p.tau_first, "ratio": round(p.ratio, 4)}
                      for p in self.pairs],
        }


@dataclass(frozen=True)
class Overall:
    """Every pair of every duel: the geometric mean of the pair ratios and its bootstrap interval."""

    pairs: int
    geomean: float
    low: float  # 2.5th percentile of the resampled geometric means
    high: float  # 97.5th
    at_least: int

    def to_json(self) -> dict:
        return {"pairs": self.pairs, "geomean": round(self.geomean, 4), "ci95": [round(self.low, 4), round(self.high, 4)],
                "pairs_at_least": self.at_least, "bar": AT_LEAST}


def overall(duels: Sequence[Duel], draws: int = 4000, seed: int = 0) -> Overall:
    """One figure for the run: each pair is one comparison seconds apart, so the pairs resample as units."""
    ratios = [p.ratio for d in duels for p in d.pairs if p.ratio > 0]
    logs = [math.log(r) for r in ratios]
    if not logs:
        return Overall(0, 0.0, 0.0, 0.0, 0)
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(logs, k=len(logs))) for _ in range(draws))
    return Overall(len(logs), math.exp(statistics.fmean(logs)), math.exp(means[int(0.025 * draws)]),
                   math.exp(means[int(0.975 * draws) - 1]), sum(r >= AT_LEAST for r in ratios))


def plain_duel(engine, binary: Path, workloads: Sequence[Workload], modes: Sequence[str], pairs: int,
               max_tokens: int = 0, progress: Callable[[str, float], None] | None = None,
               log_dir: Path | None = None) -> list[Duel]:
    """``pairs`` interleaved pairs of plain runs per workload and mode; ``max_tokens`` > 0 caps each
    run's reply (shorter runs, pairs closer together). Pair i samples with round i's seed on both sides."""
    if pairs < 1:
        raise ValueError(f"a duel takes at least one pair, not {pairs}")
    ps = engine.peer_settings
    out: list[Duel] = []
    for wl in workloads:
        short = replace(wl, max_tokens=min(wl.max_tokens, max_tokens)) if max_tokens > 0 else wl
        for mode in modes:
            log = log_dir / f"duel-{wl.name}-{mode}.log" if log_dir else None
            with LlamaServer(binary, ps.model_path, n_ctx=ps.n_ctx, threads=ps.threads, gpu_layers=ps.gpu_layers,
                             log=log) as srv:
                got = _pairs(engine, srv, short, mode, pairs, progress)
            out.append(Duel(wl.name, mode, short.max_tokens, got))
    if progress:
        progress("done", 1.0)
    return out


def _pairs(engine, srv: LlamaServer, wl: Workload, mode: str, pairs: int,
           progress: Callable[[str, float], None] | None) -> tuple[DuelPair, ...]:
    plain, peer_plain = CONFIGS[0], peer_configs(None)[0]
    run_config(engine, wl, mode, plain, 0)  # warm-up on both sides, not counted: first-touch pages,
    ask_server(engine, srv, peer_plain, wl, mode, 0)  # the server's first request
    got: list[DuelPair] = []
    for i in range(pairs):
        if progress:
            progress(f"{wl.name} {mode} plain duel {i + 1}/{pairs}", i / pairs)
        tau_first = i % 2 == 0
        if tau_first:
            t = run_config(engine, wl, mode, plain, i)
            lm = ask_server(engine, srv, peer_plain, wl, mode, i)
        else:
            lm = ask_server(engine, srv, peer_plain, wl, mode, i)
            t = run_config(engine, wl, mode, plain, i)
        got.append(DuelPair(t.tokens, t.decode_s, lm.tokens, lm.decode_s, tau_first))
    return tuple(got)


def format_duels(duels: Sequence[Duel], total: Overall | None = None) -> str:
    """The table, and the line over all pairs (``total``: ``overall(duels)`` computed already)."""
    lines = [
        "| workload | mode | tokens a run | pairs | tau plain tok/s | llama plain tok/s | pooled | median pair "
        f"| pairs range | pairs at {AT_LEAST}x or more |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for d in duels:
        ratios = [p.ratio for p in d.pairs]
        lines.append(f"| {d.workload} | {d.mode} | {d.max_tokens} | {len(d.pairs)} | {d.tau_tok_s:.1f} | "
                     f"{d.llama_tok_s:.1f} | {d.pooled:.2f}x | {d.median:.2f}x | {min(ratios):.2f}-{max(ratios):.2f}x "
                     f"| {d.at_least()} of {len(d.pairs)} |")
    o = total or overall(duels)
    lines.append(f"\nall {o.pairs} pairs: geometric mean {o.geomean:.3f}x (95% bootstrap interval {o.low:.3f}-{o.high:.3f}x), "
                 f"{o.at_least} at {AT_LEAST}x or more")
    return "\n".join(lines)


def load_duels(paths: Sequence[Path]) -> list[Duel]:
    """The duels saved by ``tau bench --plain-duel --out F.json``, every file's in order."""
    out: list[Duel] = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
            out += [Duel.from_json(d) for d in data["duels"]]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}: not a saved plain duel ({type(e).__name__}: {e})") from None
    return out


def family(workload: str) -> str:
    """A workload's name without its set: ``heldout44-new-code`` -> ``new-code``."""
    head, sep, rest = workload.partition("-")
    return rest if sep and head.startswith("heldout") else workload


def pooled_report(duels: Sequence[Duel]) -> str:
    """Every pair of several saved duels as one figure, then by workload family and mode."""
    groups: dict[tuple[str, str], list[Duel]] = {}
    for d in duels:
        groups.setdefault((family(d.workload), d.mode), []).append(d)
    lines = ["| workload | mode | pairs | geometric mean | 95% bootstrap interval | pairs at "
             f"{AT_LEAST}x or more |", "|---|---|---|---|---|---|"]
    rows = [(f"{fam} | {mode}", overall(ds)) for (fam, mode), ds in sorted(groups.items())] + [("all |", overall(duels))]
    lines += [f"| {cells} | {o.pairs} | {o.geomean:.3f}x | {o.low:.3f}-{o.high:.3f}x | {o.at_least} |" for cells, o in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m engine.lab.plainduel F.json [F.json ...]``: saved duels pooled into one figure."""
    ap = argparse.ArgumentParser(prog="python -m engine.lab.plainduel", description=main.__doc__)
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args(argv)
    try:
        duels = load_duels(args.files)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not any(d.pairs for d in duels):
        print("error: no pairs in these files", file=sys.stderr)
        return 2
    print(pooled_report(duels))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
