"""What a verified row costs the host: ``sample`` against ``sample_draft`` and a greedy argmax, on
the real model's rows while it copies a file (an edit's reply, the rows a verify pass holds).

    python -m engine.lab.rowcost MODEL.gguf [--files chatinput.ts,recipebook.py] [--rows 256] [--reps 3]

One pass of the model over a prompt and the file's first 1,500 characters gives the rows; each
method then runs over all of them (each row cold in the cache, as after a device pass) and prints
microseconds a row, checking that both samplers draw the same tokens (and that ``is_argmax`` accepts each
row's argmax, the greedy verifier's question).
"""

from __future__ import annotations  # noqa: I001  (engine.backend's llama_cpp before numpy)

import argparse
import time
from engine import backend
import numpy as np

from engine.chat_template import render_jinja
from engine.lab.benchdata.workloads import source
from engine.sampling import Sampler
from engine.types import SamplingParams


def copy_rows(model_path: str, files: list[str], per_file: int) -> np.ndarray:
    backend.init()
    m = backend.Model(model_path, gpu_layers=0)
    ctx = backend.Context(m, n_ctx=4096, n_batch=512)
    out = []
    try:
        for name in files:
            text = source(name)
            ask = [{"role": "user", "content": f"Rewrite this file, unchanged:\n{text}"}]
            prompt = render_jinja(m.chat_template() or "", ask, None, True, "", "") + "```\n"
            n_prompt = len(m.tokenize(prompt))
            ctx.clear()
            rows = ctx.decode(m.tokenize(prompt + text[:1500]), 0, all_logits=True)
            assert rows is not None
            out.append(np.array(rows[n_prompt:n_prompt + per_file], dtype=np.float32))
    finally:
        ctx.close()
        m.close()
    return np.concatenate(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.lab.rowcost")
    ap.add_argument("model")
    ap.add_argument("--files", default="chatinput.ts,recipebook.py")
    ap.add_argument("--rows", type=int, default=256, help="rows per file")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    rows = copy_rows(a.model, a.files.split(","), a.rows)
    drafts = [int(r.argmax()) for r in rows]
    params = SamplingParams(temperature=0.6, top_p=0.95, seed=1)
    n = len(rows)
    for _ in range(a.reps):
        s = Sampler(params)
        t0 = time.perf_counter()
        plain = [s.sample(r, []) for r in rows]
        t1 = time.perf_counter()
        s = Sampler(params)
        drafted = [s.sample_draft(r, [], d) for r, d in zip(rows, drafts, strict=True)]
        t2 = time.perf_counter()
        for r in rows:
            int(r.argmax())
        t3 = time.perf_counter()
        accepted = [s.is_argmax(r, [], d) for r, d in zip(rows, drafts, strict=True)]
        t4 = time.perf_counter()
        print(f"{n} rows: sample {1e6 * (t1 - t0) / n:.1f} us a row, sample_draft {1e6 * (t2 - t1) / n:.1f}, "
              f"greedy argmax {1e6 * (t3 - t2) / n:.1f}, is_argmax {1e6 * (t4 - t3) / n:.1f}; "
              f"the same tokens: {plain == drafted and all(accepted)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
