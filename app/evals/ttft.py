"""Time to first token of fresh ``tau edit`` processes, without and with a saved prompt prefix.

    python -m app.evals.ttft [--lines 100] [--runs 2] [--out ttft.json] [--peer-server BIN]
                             [model flags: --model X.gguf ...]

A 100-line Python file in a fresh repository is edited by new ``tau edit --json`` processes
(the edit is not applied):
``cold``: the prefix states are removed first, so the prompt is computed whole;
``system``: only another file's edit ran before (its saved state covers the fixed system prompt);
``same file``: an earlier edit of the same file with another instruction ran before (its state
covers the system prompt and the file). Each reports the engine's request-to-first-token time
(``stats.first_token_s``) and the process's wall time. The model load and calibration caches are
left alone: what is measured is what the saved prefix saves.

``--peer-server``: the same three cases put to llama.cpp's ``llama-server`` (running, its model
loaded): the edit's messages to ``/v1/chat/completions`` with one token to generate; ``cold`` on a
fresh server, ``system`` on another after the other file's request, ``same file`` after that. Its
prompt cache keeps what the requests before left, as tau's saved states do across processes; its
first token is the request's wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from app.agent.direct_edit import edit_messages, load_files
from app.agent.editformat import choose_format
from app.config import load_config
from app.engines.factory import engine_config
from engine.config import EngineConfig
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
            "computed_tokens": stats.get("prompt_tokens", 0) - stats.get("reused_tokens", 0), "wall_s": round(wall, 2)}


FIRST, SECOND = "Add a docstring to restock_0.", "Make restock_1 reject n above 1000."
OTHER = "Add type hints where they are missing."


def _peer_rows(binary: Path, work: Path, run: int, ecfg: EngineConfig) -> list[dict]:
    """The three cases as tau's run has them: ``cold`` on a fresh server; ``system`` on another fresh
    one after the other file's edit (its prompt cache keeps every recent prompt: the first server
    would serve ``system`` whole); ``same file`` next on that one."""
    from engine.lab.peer_server import LlamaServer

    def server() -> LlamaServer:
        return LlamaServer(binary, ecfg.model_path, n_ctx=ecfg.n_ctx,
                           threads=ecfg.threads or (os.cpu_count() or 1), gpu_layers=ecfg.gpu_layers)

    def ask(srv: LlamaServer, name: str, instruction: str) -> dict:
        files = load_files(work, [name])
        fmt = choose_format([f.text for f in files], lambda t: len(srv.post("/tokenize", {"content": t})[0]["tokens"]))
        out, wall = srv.post("/v1/chat/completions", {"messages": edit_messages(files, instruction, fmt),
                                                      "max_tokens": 1, "temperature": 0.0, "cache_prompt": True})
        return {"first_token_s": round(wall, 3), "prompt_tokens": out.get("usage", {}).get("prompt_tokens"),
                "computed_tokens": out.get("timings", {}).get("prompt_n"), "wall_s": round(wall, 3)}

    with server() as srv:
        rows = [{"case": "cold", "run": run, **ask(srv, "inventory.py", FIRST)}]
    with server() as srv:
        ask(srv, "other.py", OTHER)
        rows.append({"case": "system", "run": run, **ask(srv, "inventory.py", FIRST)})
        rows.append({"case": "same file", "run": run, **ask(srv, "inventory.py", SECOND)})
    return rows


def _summary(rows: list[dict]) -> dict[str, dict]:
    out = {}
    for case in ("cold", "system", "same file"):
        mine = [r for r in rows if r["case"] == case]
        out[case] = {"first_token_s": round(statistics.median(r["first_token_s"] or 0 for r in mine), 2),
                     "wall_s": round(statistics.median(r["wall_s"] for r in mine), 2),
                     "prompt_tokens": mine[0]["prompt_tokens"], "computed_tokens": mine[0].get("computed_tokens")}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.evals.ttft", description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=100)
    ap.add_argument("--runs", type=int, default=2, help="repetitions of each case (fresh repositories)")
    ap.add_argument("--out", default="ttft.json")
    ap.add_argument("--peer-server", default="", help="llama-server binary (or its build directory): the same cases")
    args, flags = ap.parse_known_args(argv)
    peer: tuple[Path, EngineConfig] | None = None  # the server binary, and the model and settings it runs
    if args.peer_server:
        from engine.lab.peer_server import find_server

        try:
            binary = find_server(args.peer_server)
        except ValueError as e:
            raise SystemExit(f"ttft: {e}") from None
        ecfg = engine_config(load_config())
        if "--model" in flags[:-1]:
            ecfg = replace(ecfg, model_path=flags[flags.index("--model") + 1])
        peer = (binary, ecfg)
    prefix_dir = cache_dir() / "prefix"
    rows: list[dict] = []
    peer_rows: list[dict] = []
    for run in range(args.runs):
        work = Path(tempfile.mkdtemp(prefix="tau-ttft-"))
        subprocess.run(["git", "init", "-q"], cwd=work, check=True)
        (work / "inventory.py").write_text(sample_file(args.lines, f"R{run}"), encoding="utf-8")
        (work / "other.py").write_text(sample_file(args.lines, f"O{run}"), encoding="utf-8")
        shutil.rmtree(prefix_dir, ignore_errors=True)
        rows.append({"case": "cold", "run": run, **_edit(work, "inventory.py", FIRST, flags)})
        shutil.rmtree(prefix_dir, ignore_errors=True)
        _edit(work, "other.py", OTHER, flags)  # saves the system prompt's state
        rows.append({"case": "system", "run": run, **_edit(work, "inventory.py", FIRST, flags)})
        rows.append({"case": "same file", "run": run, **_edit(work, "inventory.py", SECOND, flags)})
        if peer is not None:
            peer_rows += _peer_rows(peer[0], work, run, peer[1])
        shutil.rmtree(work, ignore_errors=True)
    summary = {"tau edit": _summary(rows)}
    if peer_rows:
        summary["llama-server"] = _summary(peer_rows)
    Path(args.out).write_text(json.dumps({"lines": args.lines, "rows": rows, "peer_rows": peer_rows,
                                          "summary": summary}, indent=1))
    print("| case | system | prompt tokens | computed | first token (median) | request or process wall (median) |")
    print("|---|---|---|---|---|---|")
    for case in ("cold", "system", "same file"):
        for name, by_case in summary.items():
            c = by_case[case]
            print(f"| {case} | {name} | {c['prompt_tokens']} | {c['computed_tokens'] if c['computed_tokens'] is not None else '-'} "
                  f"| {c['first_token_s']:.2f} s | {c['wall_s']:.2f} s |")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
