"""``tau bench`` on any GGUF pair through the engine alone, for a GPU machine that has
llama-cpp-python and numpy but not the app's dependencies (no package index there).

    python -m engine.lab.gpu.real_bench TARGET.gguf DRAFT.gguf|none SUITE CONFIGS ROUNDS OUT.json [LLAMA_SERVER] [--paired] [--widths 16,64] [--no-overlap] [--modes greedy,sampled]

Prints the same tables as ``tau bench`` (with ``--peer-server`` when LLAMA_SERVER, a llama-server
binary built from the same llama.cpp tree, is given) and writes the same JSON (cache and
llama.cpp log in /tmp/tau-cache).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from engine import backend  # noqa: F401  (llama_cpp before numpy)
from engine.config import EngineConfig
from engine.lab.bench import run_bench
from engine.lab.benchpeer import run_beside_llama_server
from engine.lab.benchreport import format_peer_table, format_table, results_json
from engine.local import LocalEngine


def main(argv: list[str]) -> int:
    paired = "--paired" in argv
    overlap = None if "--no-overlap" not in argv else False  # None: the engine's default (on with a GPU)
    argv = [a for a in argv if a not in ("--paired", "--no-overlap")]
    widths = None  # the engine's default; "0" = unpadded passes
    if "--widths" in argv:
        i = argv.index("--widths")
        widths = tuple(int(w) for w in argv[i + 1].split(",") if int(w) > 0)
        del argv[i:i + 2]
    modes: tuple[str, ...] = ("greedy", "sampled")
    if "--modes" in argv:  # e.g. sampled-llama: llama-server's chain and defaults on both sides
        i = argv.index("--modes")
        modes = tuple(m for m in argv[i + 1].split(",") if m)
        del argv[i:i + 2]
    if len(argv) not in (6, 7):
        print(__doc__, file=sys.stderr)
        return 2
    target, draft, suite, configs, rounds, out = argv[:6]
    peer = Path(argv[6]) if len(argv) == 7 else None
    cfg = EngineConfig(model_path=target, draft_model_path=None if draft == "none" else draft,
                       cache_dir="/tmp/tau-cache", log_path="/tmp/tau-cache/llama.log", gpu_layers=-1, n_ctx=8192,
                       pass_widths=widths, overlap_pick=overlap)
    t0 = time.time()
    eng = LocalEngine(cfg, progress=lambda m, f: print("..", m, flush=True))
    print(f"loaded in {time.time() - t0:.1f} s; {eng.info.backend}; pass rows {eng.ctx.pad_table}; "
          f"overlapped picks {eng.target.overlap}", flush=True)

    def say(message: str, _fraction: float) -> None:
        print("..", message, flush=True)

    try:
        if peer is not None:
            res = run_beside_llama_server(eng, peer, suite, modes, tuple(configs.split(",")), int(rounds), paired,
                                          progress=say, log_dir=Path(out).parent)
        else:
            res = run_bench(eng, suite, modes, tuple(configs.split(",")), progress=say, rounds=int(rounds),
                            paired=paired)
        data = results_json(eng, suite, int(rounds), res)
        data["pad_table"] = list(eng.ctx.pad_table)
        data["overlap_pick"] = eng.target.overlap
    finally:
        eng.close()
    with open(out, "w") as f:
        json.dump(data, f, indent=1)
    print(format_table(res))
    if data["peer"]:
        print("\n" + format_peer_table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
