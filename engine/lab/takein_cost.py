"""What the n-gram overlay's first proposal of a request costs, with and without the prompt
taken in beside the prefill (``Speculator.prepare``), on the long suite's prompts.

    python -m engine.lab.takein_cost [TARGET.gguf]

A GPU step of the default 1.5B model takes about 2 ms, so a first proposal that indexes a new
turn of 500-1,600 tokens is a real share of a short reply. Prompts are rendered as ChatML (the
default model's format) and tokenized by the target (loaded on the CPU).
"""

from __future__ import annotations

import statistics
import sys
import time

from engine import backend  # noqa: F401  (llama_cpp before numpy)
from engine.drafters.ngram import NgramDrafter
from engine.lab.benchdata.workloads import SUITES
from engine.paths import cache_dir


def _prompts(path: str) -> list[list[int]]:
    backend.init()
    model = backend.Model(path, gpu_layers=0)
    out = []
    for turn in SUITES["long"][0].turns:
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in turn) + "<|im_start|>assistant\n"
        out.append(model.tokenize(text))
    model.close()
    return out


def first_proposals(prompts: list[list[int]], take_in: bool) -> list[float]:
    """Milliseconds of each request's first proposal, one overlay serving them all in a row."""
    d = NgramDrafter()
    ms = []
    for p in prompts:
        if take_in:
            d.take_in(p)
        hist = list(p)
        t0 = time.perf_counter()
        d.propose(hist, 16)
        ms.append((time.perf_counter() - t0) * 1e3)
        hist.extend(p[:50])  # a reply of sorts, so the next prompt shares a prefix and adds a turn
        d.propose(hist, 16)
    return ms


def main(argv: list[str]) -> int:
    path = argv[0] if argv else str(cache_dir() / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    prompts = _prompts(path)
    for label, flag in (("cold", False), ("taken in", True)):
        ms = first_proposals(prompts, flag)
        print(f"{label:9s} first proposal over {len(ms)} requests: median {statistics.median(ms):.2f} ms, "
              f"max {max(ms):.2f} ms, total {sum(ms):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
