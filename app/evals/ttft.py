"""Time to first token of fresh ``tau edit`` processes, without and with a saved prompt prefix.

    python -m app.evals.ttft [--lines 100] [--runs 2] [--out ttft.json] [model flags: --model X.gguf ...]

A 100-line Python file in a fresh repository is edited by new ``tau edit --json`` processes
(the edit is not applied):
``cold``: the prefix states are removed first, so the prompt is computed whole;
``system``: only another file's edit ran before (its saved state covers the fixed system prompt);
``same file``: an earlier edit of the same file with another instruction ran before (its state
covers the system prompt and the file). Each reports the engine's request-to-first-token time
(``stats.first_token_s``) and the process's wall time. The model load and calibration caches are
left alone: what is measured is what the saved prefix saves.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine.paths import cache_dir


def sample_file(lines: int, salt: str = "") -> str:
    """A plausible Python module of ``lines`` lines (small classes and functions)."""
    out = ['"""Inventory records and their arithmetic."""', "", "from dataclasses import dataclass", ""]
    i = 0
    while len(out) < lines - 6:
        out += ["", "@dataclass", f"class Item{salt}{i}:", "    name: str", "    price: float", "    count: int = 0", "",
                "    def total(self) -> float:", f"        return self.price * self.count + {i}", "",
                f"def restock{salt}_{i}(item: Item{salt}{i}, n: int) -> Item{salt}{i}:",
                "    if n < 0:", "        raise ValueError('negative restock')",
                f"    return Item{salt}{i}(item.name, item.price, item.count + n)"]
        i += 1
    return "\n".join(out[:lines]) + "\n"


def _edit(root: Path, name: str, instruction: str, flags: list[str]) -> dict:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "app.cli.main", "edit", name, instruction, "--json", *flags],
                       cwd=root, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    try:
        stats = json.loads(p.stdout.strip().splitlines()[-1])["stats"]
    except (IndexError, ValueError, KeyError):
        raise SystemExit(f"tau edit gave no JSON (exit {p.returncode}): {p.stderr.strip()[-300:]}") from None
    return {"first_token_s": stats.get("first_token_s"), "prompt_tokens": stats.get("prompt_tokens"),
            "wall_s": round(wall, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.evals.ttft", description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=100)
    ap.add_argument("--runs", type=int, default=2, help="repetitions of each case (fresh repositories)")
    ap.add_argument("--out", default="ttft.json")
    args, flags = ap.parse_known_args(argv)
    prefix_dir = cache_dir() / "prefix"
    rows = []
    for run in range(args.runs):
        work = Path(tempfile.mkdtemp(prefix="tau-ttft-"))
        subprocess.run(["git", "init", "-q"], cwd=work, check=True)
        (work / "inventory.py").write_text(sample_file(args.lines, f"R{run}"), encoding="utf-8")
        (work / "other.py").write_text(sample_file(args.lines, f"O{run}"), encoding="utf-8")
        shutil.rmtree(prefix_dir, ignore_errors=True)
        rows.append({"case": "cold", "run": run, **_edit(work, "inventory.py", "Add a docstring to restock_0.", flags)})
        shutil.rmtree(prefix_dir, ignore_errors=True)
        _edit(work, "other.py", "Add type hints where they are missing.", flags)  # saves the system prompt's state
        rows.append({"case": "system", "run": run, **_edit(work, "inventory.py", "Add a docstring to restock_0.", flags)})
        rows.append({"case": "same file", "run": run,
                     **_edit(work, "inventory.py", "Make restock_1 reject n above 1000.", flags)})
        shutil.rmtree(work, ignore_errors=True)
    summary = {}
    for case in ("cold", "system", "same file"):
        mine = [r for r in rows if r["case"] == case]
        summary[case] = {"first_token_s": round(statistics.median(r["first_token_s"] or 0 for r in mine), 2),
                         "wall_s": round(statistics.median(r["wall_s"] for r in mine), 2),
                         "prompt_tokens": mine[0]["prompt_tokens"]}
    Path(args.out).write_text(json.dumps({"lines": args.lines, "rows": rows, "summary": summary}, indent=1))
    print("| case | prompt tokens | first token (median) | process wall (median) |\n|---|---|---|---|")
    for case, s in summary.items():
        print(f"| {case} | {s['prompt_tokens']} | {s['first_token_s']:.2f} s | {s['wall_s']:.2f} s |")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
