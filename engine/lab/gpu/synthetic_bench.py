"""``tau bench --synthetic SHAPE``: the engine measured on a random-weight model of a named shape.

On whatever device the llama.cpp build drives (CUDA, ROCm, Vulkan, CPU) it measures:

1. plain decode (a raw loop of ``Context.decode`` + argmax) against the bandwidth ceiling
   (weight bytes per token from ``engine.gguf_info`` over the device's memory bandwidth);
2. the verify-cost curve: seconds to evaluate n = 1..33 rows with logits on all rows;
3. the engine's per-step overhead: ``engine.decoder.run`` with speculation off against the
   raw loop, same prompt and tokens (goal: within 3%);
4. the speculative loop with a controlled-acceptance drafter (``engine.drafters.replay``)
   at synthetic tau 4 and 8, against the curve's prediction tau / cost(K+1) (goal: 10%);
5. the GPU settings a user needs: target KV q8_0 / q4_0 (flash attention), an f16 context
   as the drafter's, partial offload, and how the fit check's estimate compares with the
   memory the device really gave (engine.lab.gpu.synthetic_engine).
"""

# ruff: noqa: I001  (engine.backend, which imports llama_cpp, must come before numpy)

from __future__ import annotations

from engine import backend

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


from engine.config import EngineConfig
from engine.slot import DrafterSlot
from engine.drafters.replay import ReplayDrafter, expected_tau, rates_for_tau
from engine.devices import GiB
from engine.memfit import check_fit
from engine.gguf_info import read_gguf
from engine.lab.gpu.synthetic import get_shape, write_synthetic
from engine.lab.gpu.synthetic_device import device_info, _used_mib
from engine.lab.gpu.synthetic_loops import PROMPT_TOKENS, ConditionalAcceptance, _Bench, _pick_prompt
from engine.lab.gpu.synthetic_engine import local_engine_check
from engine.lab.gpu.synthetic_report import format_table
from engine.spec import SpecConfig

Progress = Callable[[str, float], None]

CURVE_MAX = 33  # rows: verifying up to 32 drafted tokens
SPEC_CASES: tuple[tuple[str, int, tuple[float, ...]], ...] = (
    ("tau4-K3", 3, tuple(rates_for_tau(4, 3))),
    ("tau4-K7", 7, tuple(rates_for_tau(4, 7))),
    ("tau8-K7", 7, tuple(rates_for_tau(8, 7))),
    ("tau8-K15", 15, tuple(rates_for_tau(8, 15))),
    ("a0.8-K8", 8, (0.8,)),
)
ADAPTIVE_CASES: tuple[tuple[str, int, tuple[float, ...]], ...] = (
    ("a0.8", 24, (0.8,)),
    ("a0.9", 24, (0.9,)),
)


def run_synthetic(
    shape: str,
    out_dir: str | Path,
    *,
    progress: Progress | None = None,
    model_path: str | None = None,
    n_ctx: int = 4096,
    gpu_layers: int = -1,
    flash_attn: bool | None = True,
    threads: int = 0,
    extra_buffers: bool | None = None,
    tokens: int = 256,
    repeats: int = 3,
    curve_reps: int = 5,
    curve_max: int = CURVE_MAX,
    extras: bool = True,
    json_path: str | Path | None = None,
    draft_path: str | None = None,
    prompt_tokens: int = PROMPT_TOKENS,
    spec_cases: Sequence[tuple[str, int, tuple[float, ...]]] = SPEC_CASES,
    adaptive_cases: Sequence[tuple[str, int, tuple[float, ...]]] = ADAPTIVE_CASES,
) -> dict[str, Any]:
    """Write (or reuse) the synthetic model of ``shape`` under ``out_dir`` and measure it.

    Returns the results dict (also written as JSON beside the model, or to ``json_path``).
    Each stage's failure is recorded under ``errors`` and the rest still runs.
    """
    say = progress or (lambda _m, _f: None)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {
        "shape": shape,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "errors": {},
    }
    jpath = Path(json_path) if json_path else out / f"synthetic-{shape}-result.json"

    def save() -> None:
        jpath.write_text(json.dumps(res, indent=1, default=float))

    backend.init(str(out / "llama.log"))
    res["device"] = dev = device_info()
    gpu = bool(dev["gpu_offload"]) and gpu_layers != 0
    sh = get_shape(shape)
    res["shape_dims"] = sh.__dict__
    path = Path(model_path) if model_path else out / f"synthetic-{shape}.gguf"
    if not path.exists():
        t0 = time.perf_counter()
        write_synthetic(sh, path, progress=say)
        res["write_s"] = round(time.perf_counter() - t0, 2)
    info = read_gguf(path)
    res["model"] = {
        "path": str(path),
        "file_gib": round(info.file_size / GiB, 3),
        "bytes_per_token": info.bytes_per_token,
        "quant": info.quant,
        "n_vocab": info.n_vocab,
    }
    bw = float(dev.get("bandwidth_gbs") or 0.0)
    ceiling = bw * 1e9 / info.bytes_per_token if bw else 0.0
    res["ceiling_tok_s"] = round(ceiling, 2)
    ecfg = EngineConfig(
        model_path=str(path), n_ctx=n_ctx, gpu_layers=gpu_layers, flash_attn=flash_attn, threads=threads
    )
    try:
        rep = check_fit(ecfg, gpu=gpu, raise_error=False)
        res["fit"] = rep.to_dict()
    except Exception as e:  # noqa: BLE001
        res["errors"]["fit"] = repr(e)
    used0 = _used_mib()
    say(f"loading {path.name}", 0.0)
    t0 = time.perf_counter()
    model = backend.Model(str(path), gpu_layers=gpu_layers, extra_buffers=extra_buffers)
    res["extra_buffers"] = model.extra_buffers  # llama.cpp's extra CPU buffer types (AMX, repacked weights)
    ctx = backend.Context(
        model, n_ctx=n_ctx, n_batch=512, threads=threads, kv_type="f16", flash_attn=flash_attn
    )
    res["load_s"] = round(time.perf_counter() - t0, 2)
    used1 = _used_mib()
    if used0 is not None and used1 is not None:
        res["device_used_gib"] = round((used1 - used0) / 1024, 3)
    save()
    prompt = _pick_prompt(model, prompt_tokens, 0)
    b = _Bench(model, ctx, prompt, say)

    # 1. prefill and plain decode (raw loop), reference output
    ref: list[int] = []
    try:
        b.prefill()  # warm-up
        pf = [b.prefill()[0] for _ in range(2)]
        res["prefill_tok_s"] = round(len(prompt) / min(pf), 1)
        for seed in range(1, 6):
            _, ref = b.raw_loop(tokens)
            if not any(model.is_eog(t) for t in ref):
                break
            prompt = _pick_prompt(model, prompt_tokens, seed)  # the greedy output ended: another prompt
            b.prompt = prompt
        res["greedy_distinct_tokens"] = len(set(ref))
    except Exception as e:  # noqa: BLE001
        res["errors"]["decode"] = repr(e)
    say("plain decode", 1.0)

    # 2. verify-cost curve
    curve: dict[int, float] = {}
    try:
        curve = b.curve(len(prompt), curve_max, curve_reps)
        res["verify_ms"] = {n: round(v * 1e3, 3) for n, v in curve.items()}
        res["verify_ratio"] = {n: round(v / curve[1], 3) for n, v in curve.items()}
    except Exception as e:  # noqa: BLE001
        res["errors"]["curve"] = repr(e)
    save()

    # 3. engine overhead: decoder.run with speculation off vs the raw loop, interleaved
    try:
        raw_steps, eng_steps, same = [], [], True
        for _ in range(repeats):
            times, toks = b.raw_loop(tokens)
            raw_steps.append(sum(times) / len(times))
            r = b.engine_run(tokens, SpecConfig(drafters=()), {}, curve or {1: 0.01})
            eng_steps.append(r["step_s"])
            same = same and r["tokens"] == toks
        raw = statistics.median(raw_steps)
        eng = statistics.median(eng_steps)
        res["plain"] = {
            "raw_step_ms": round(raw * 1e3, 4),
            "engine_step_ms": round(eng * 1e3, 4),
            "raw_tok_s": round(1 / raw, 2),
            "engine_tok_s": round(1 / eng, 2),
            "overhead_pct": round((eng / raw - 1) * 100, 2),
            "raw_step_ms_all": [round(x * 1e3, 4) for x in raw_steps],
            "engine_step_ms_all": [round(x * 1e3, 4) for x in eng_steps],
            "same_tokens": same,
            "ceiling_frac": round(1 / raw / ceiling, 4) if ceiling else None,
        }
    except Exception as e:  # noqa: BLE001
        res["errors"]["overhead"] = repr(e)
    save()
    say("engine overhead", 1.0)

    # 4. speculative decoding at controlled acceptance
    if curve and ref:
        spec_rows = []
        ref_full = prompt + ref
        for name, k, rates in spec_cases:
            try:
                dr = ReplayDrafter(ref_full, rates, vocab_size=model.n_vocab, seed=7)
                slots = {"replay": DrafterSlot(dr, lookup=True)}
                spec = SpecConfig(drafters=("replay",), adaptive=False, fixed_window=k, max_window=k)
                runs = [b.engine_run(tokens, spec, slots, curve) for _ in range(2)]
                r = max(runs, key=lambda x: x["tok_s"])
                pred = r["tau"] / curve[min(k + 1, max(curve))] if k + 1 <= max(curve) else 0.0
                spec_rows.append(
                    {
                        "case": name,
                        "window": k,
                        "rates": list(rates),
                        "tau_expected": round(expected_tau(rates, k), 3),
                        "tau": round(r["tau"], 3),
                        "tok_s": round(r["tok_s"], 2),
                        "predicted_tok_s": round(pred, 2),
                        "error_pct": round((r["tok_s"] / pred - 1) * 100, 2) if pred else None,
                        "speedup_vs_raw": round(
                            r["tok_s"] * res.get("plain", {}).get("raw_step_ms", 0) / 1e3, 3
                        ),
                        "passes": r["passes"],
                        "finish": r["finish"],
                    }
                )
            except Exception as e:  # noqa: BLE001
                res["errors"][f"spec-{name}"] = repr(e)
            say("speculative loop", len(spec_rows) / max(1, len(spec_cases)))
        res["spec"] = spec_rows
        # the adaptive policy at constant acceptance, against the best fixed window on the curve
        adaptive_rows = []
        for (name, kmax, rates), estimator in [
            (c, e) for c in adaptive_cases for e in ("shipped", "conditional")
        ]:
            try:
                dr = ReplayDrafter(ref_full, rates, vocab_size=model.n_vocab, seed=11)
                slots = {"replay": DrafterSlot(dr, lookup=True)}
                spec = SpecConfig(drafters=("replay",), adaptive=True, max_window=kmax)
                runs = [
                    b.engine_run(
                        tokens,
                        spec,
                        slots,
                        curve,
                        ConditionalAcceptance() if estimator == "conditional" else None,
                    )
                    for _ in range(2)
                ]
                r = max(runs, key=lambda x: x["tok_s"])
                best_k, best = 0, 1.0 / curve[1]
                for k in range(1, min(kmax, max(curve) - 1) + 1):
                    v = expected_tau(rates, k) / curve[k + 1]
                    if v > best:
                        best_k, best = k, v
                adaptive_rows.append(
                    {
                        "case": name,
                        "estimator": estimator,
                        "max_window": kmax,
                        "rates": list(rates),
                        "tau": round(r["tau"], 3),
                        "mean_window": round(r["drafted"] / r["passes"], 2) if r["passes"] else 0.0,
                        "tok_s": round(r["tok_s"], 2),
                        "best_fixed_window": best_k,
                        "best_fixed_tok_s": round(best, 2),
                        "vs_best_pct": round((r["tok_s"] / best - 1) * 100, 2),
                    }
                )
            except Exception as e:  # noqa: BLE001
                res["errors"][f"adaptive-{name}-{estimator}"] = repr(e)
        res["adaptive"] = adaptive_rows
        save()

    # 5. GPU settings: quantized target KV, f16 drafter-style context, partial offload
    if extras:
        settings: dict[str, Any] = {}
        for kv in ("q8_0", "q4_0"):
            try:
                c2 = backend.Context(
                    model, n_ctx=n_ctx, n_batch=512, threads=threads, kv_type=kv, flash_attn=True
                )
                b2 = _Bench(model, c2, prompt, say)
                times, toks = b2.raw_loop(min(tokens, 64))
                settings[f"kv_{kv}"] = {
                    "tok_s": round(len(times) / sum(times), 2),
                    "agree_with_f16": sum(x == y for x, y in zip(toks, ref, strict=False)) / len(toks),
                }
                c2.close()
            except Exception as e:  # noqa: BLE001
                settings[f"kv_{kv}"] = {"error": repr(e)}
        try:
            c3 = backend.Context(
                model, n_ctx=n_ctx, n_batch=512, threads=threads, kv_type="f16", flash_attn=flash_attn
            )
            times, _ = _Bench(model, c3, prompt, say).raw_loop(32)
            settings["drafter_ctx_f16"] = {"tok_s": round(len(times) / sum(times), 2)}
            c3.close()
        except Exception as e:  # noqa: BLE001
            settings["drafter_ctx_f16"] = {"error": repr(e)}
        res["settings"] = settings
        save()
    ctx.close()
    model.close()
    if extras and gpu and sh.layers > 2:
        try:
            half = sh.layers // 2
            t0 = time.perf_counter()
            m2 = backend.Model(str(path), gpu_layers=half)
            c4 = backend.Context(
                m2, n_ctx=n_ctx, n_batch=512, threads=threads, kv_type="f16", flash_attn=flash_attn
            )
            load = time.perf_counter() - t0
            times, _ = _Bench(m2, c4, prompt, say).raw_loop(12)
            res.setdefault("settings", {})["offload_half"] = {
                "gpu_layers": half,
                "tok_s": round(len(times) / sum(times), 2),
                "load_s": round(load, 2),
            }
            c4.close()
            m2.close()
        except Exception as e:  # noqa: BLE001
            res.setdefault("settings", {})["offload_half"] = {"error": repr(e)}
    save()
    if draft_path:
        try:
            res["local_engine"] = local_engine_check(
                str(path), draft_path, out, n_ctx=n_ctx, gpu_layers=gpu_layers, tokens=tokens
            )
        except Exception as e:  # noqa: BLE001
            res["errors"]["local_engine"] = repr(e)
        save()
    say("done", 1.0)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m engine.lab.gpu.synthetic_bench", description=__doc__.splitlines()[0]
    )
    ap.add_argument("shape", help="tiny | dense-1.5b | dense-7b | dense-27b | dense-30b | dense-32b")
    ap.add_argument(
        "--out", help="folder for the model file, log and JSON (default: tau's cache dir/synthetic)"
    )
    ap.add_argument("--model", help="an existing GGUF instead of writing the shape's")
    ap.add_argument(
        "--json", nargs="?", const="-", help="print the results as JSON (or, with a path, write them there)"
    )
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--gpu-layers", type=int, default=-1)
    ap.add_argument("--flash-attn", choices=["on", "off", "auto"], default="on")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--extra-buffers", choices=["on", "off", "auto"], default="auto",
                    help="llama.cpp's extra CPU buffer types (AMX / repacked weights); auto: off on CPU")
    ap.add_argument("--tokens", type=int, default=256, help="tokens per generation")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--prompt-tokens", type=int, default=PROMPT_TOKENS)
    ap.add_argument("--curve-max", type=int, default=CURVE_MAX)
    ap.add_argument("--no-extras", action="store_true", help="skip the KV-type / offload checks")
    ap.add_argument(
        "--draft", help="a draft GGUF (same vocabulary): also run LocalEngine with KV q8_0 + this drafter"
    )
    a = ap.parse_args(argv)

    def prog(label: str, frac: float) -> None:
        print(f"  {label} {frac * 100:5.1f}%", file=sys.stderr, flush=True)

    if a.out is None:
        from engine.paths import cache_dir

        a.out = str(cache_dir() / "synthetic")
    to_stdout = a.json == "-"
    res = run_synthetic(
        a.shape,
        a.out,
        progress=prog,
        model_path=a.model,
        n_ctx=a.ctx,
        gpu_layers=a.gpu_layers,
        flash_attn={"on": True, "off": False, "auto": None}[a.flash_attn],
        threads=a.threads,
        extra_buffers={"on": True, "off": False, "auto": None}[a.extra_buffers],
        tokens=a.tokens,
        repeats=a.repeats,
        curve_max=a.curve_max,
        extras=not a.no_extras,
        json_path=None if to_stdout else a.json,
        draft_path=a.draft,
        prompt_tokens=a.prompt_tokens,
    )
    print(json.dumps(res, indent=1, default=float) if to_stdout else format_table(res))
    return 0 if not res.get("errors") else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
