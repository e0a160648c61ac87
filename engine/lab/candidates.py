"""How much verifying several candidate continuations in one pass could add: a bound from recordings.

    python -m engine.lab.candidates RECORDING.json ... --curve CURVE.json [--pad 16,64]

The overlay proposes one continuation at each position. Where the same last tokens occur in
several places of the prompt and the output, a pass could verify two or more of them at once
(several sequences over one KV cache). Before building that, this bounds its worth on the
outputs ``engine.lab.replay record`` kept: at every position the longest continuation that *any*
place with the same last 4 or 2 tokens (or the overlay's own proposal) matches, and the ceiling
(``engine.lab.simulate.ceiling_of``: best windows, known in advance) with those matches against
the ceiling with the overlay's alone, charging the candidates' rows free (an upper bound) and
at two rows a drafted token (two candidates of the same length).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from statistics import geometric_mean

from engine.drafters.ngram import NgramDrafter
from engine.lab.replay import pad_table
from engine.lab.simulate import ceiling_of, matches
from engine.widths import padded_curve

MAX_LEN = 64
KEYS = (4, 2)


def any_place_matches(prompt: Sequence[int], output: Sequence[int], key: int, max_len: int = MAX_LEN) -> list[int]:
    """At each output position: the longest match, over every earlier place whose ``key`` tokens
    equal the last ``key`` tokens, of that place's continuation against the output."""
    hist = list(prompt)
    places: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for p in range(key, len(hist) + 1):
        places[tuple(hist[p - key:p])].append(p)
    out = []
    for i in range(len(output)):
        best = 0
        for p in places.get(tuple(hist[-key:]), ()):
            m = 0
            while m < max_len and i + m < len(output) and p + m < len(hist) and hist[p + m] == output[i + m]:
                m += 1
            best = max(best, m)
        out.append(best)
        hist.append(output[i])
        places[tuple(hist[-key:])].append(len(hist))
    return out


def bounds(prompt: Sequence[int], output: Sequence[int], curve: dict[int, float]) -> dict[str, float]:
    """Ceiling speedups over plain: the overlay's proposals, any place's (rows free), any place's at
    two rows a drafted token."""
    own = matches(prompt, output, NgramDrafter(), MAX_LEN)
    anyp = [max(row) for row in zip(own, *(any_place_matches(prompt, output, k) for k in KEYS), strict=True)]
    out = {}
    for name, ms, rows in (("overlay", own, 1), ("any place", anyp, 1), ("any place, 2 rows", anyp, 2)):
        plain, best = ceiling_of(ms, curve, max_len=MAX_LEN, rows_per_token=rows)
        out[name] = round(plain / best, 3) if best else 1.0
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.lab.candidates", description=__doc__.splitlines()[0])
    ap.add_argument("recordings", nargs="+")
    ap.add_argument("--curve", required=True, help="a bench or replay JSON with a verify_curve")
    ap.add_argument("--pad", default="", help="pad the curve to these widths (a GPU's captured graphs)")
    args = ap.parse_args(argv)
    raw = json.loads(Path(args.curve).read_text(encoding="utf-8"))["verify_curve"]
    curve = padded_curve({int(k): float(v) for k, v in raw.items()}, pad_table(args.pad))
    rows = []
    for path in args.recordings:
        for name, wl in json.loads(Path(path).read_text(encoding="utf-8"))["workloads"].items():
            if wl["kind"] == "edit":
                b = bounds(wl["prompt"], wl["output"], curve)
                rows.append(b)
                print(f"{name:28s}", "  ".join(f"{k} {v:.2f}x" for k, v in b.items()))
    if rows:
        geo = {k: geometric_mean(r[k] for r in rows) for k in rows[0]}
        print(f"{'geomean':28s}", "  ".join(f"{k} {v:.3f}x" for k, v in geo.items()))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
