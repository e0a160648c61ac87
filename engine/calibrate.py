"""Per-machine load settings, measured once at first load: CPU weight layout, threads, flash attention.

For every candidate a child process (``python -m engine.calibrate``) loads the model, times
a prompt's prefill, then a short plain decode and a verify pass at an edit's context length
(flash attention's cost there differs from its cost in a near-empty context), and prints one
JSON line. Each weight layout
gets its own child, so a layout whose kernels crash (llama.cpp's AMX path died of SIGILL on
one Xeon VM) kills only that child and is ruled out; the user's process never runs it. The
choice minimises one plain step plus one verify pass (decode and verification together)
and is cached beside the verify curve, keyed by CPU, llama.cpp build and model. Each child
also times a KV state copy: where the other layout (same threads and
flash attention) prefills enough faster, long prompt additions are computed on it
(``engine.sideprefill``). Explicit settings in the config are never overridden, only the
ones left on auto are calibrated.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from engine.config import EngineConfig, layout_name
from engine.profile import calibration_path, calibration_stem, load_profile, save_profile

CALIBRATION_VERSION = 5
VERIFY_ROWS = 16  # an edit's verify windows on CPU run 16-64 rows
WARM_TOKENS = 64  # context before the timed prefill: enough to touch every weight once
STEPS = 4
PREFILL_TOKENS = 960  # a timed prefill (two batches), which also brings the context to an edit's length
# steps and passes are timed after this much context: at 64 tokens flash attention looked 4%
# cheaper, at an edit's 1-2k tokens it made 8-32-row passes 6-22% dearer (MEASUREMENTS.md)
CONTEXT_TOKENS = WARM_TOKENS + PREFILL_TOKENS
N_BATCH = 512
# a representative agent request on CPU, what the choice minimises: new prompt tokens to prefill (a
# file or a tool's output), single steps and verify passes (the long run's auto averaged 311 tokens a
# request in about 100 steps and 35 passes); a 1:1 step and pass let 5% on 16-row passes outweigh
# 6% on every step and 22% on prefill (flash attention on the Xeon with AMX, MEASUREMENTS.md)
REQUEST_PREFILL, REQUEST_STEPS, REQUEST_PASSES = 500, 100, 30
SIDE_GAIN = 1.15  # the other layout prefills at least this much faster, or no side context
CHILD_TIMEOUT_S = 120.0

Runner = Callable[[Sequence[str], float], "tuple[int, str]"]


@dataclass(frozen=True)
class Candidate:
    extra_buffers: bool
    flash_attn: bool
    threads: int
    amx: bool = True  # with extra buffers: llama.cpp's AMX type allowed (False: repacked without it)

    @property
    def layout(self) -> str:
        return layout_name(self.extra_buffers, self.amx)


@dataclass(frozen=True)
class Timing:
    """What a child measured for one candidate (seconds; prefill and copy per token)."""

    candidate: Candidate
    step_s: float
    verify_s: float
    prefill_s: float = 0.0
    copy_s: float = 0.0


@dataclass(frozen=True)
class Choice:
    """The load settings the engine uses, and where they came from."""

    extra_buffers: bool
    flash_attn: bool | None  # None: llama.cpp's own choice (GPU)
    threads: int  # 0 = all cores
    source: str  # calibrated | config | default
    step_s: float = 0.0  # one plain decode step with this choice
    verify_s: float = 0.0  # one VERIFY_ROWS-row pass with this choice
    ruled_out: tuple[str, ...] = ()  # layouts whose child crashed, e.g. "extra_buffers on: signal 4"
    prefill_s: float = 0.0  # prefill seconds per token with this choice
    side_prefill_s: float = 0.0  # ...on the other layout, when long additions go there (0 = they don't)
    copy_s: float = 0.0  # one KV state copy, seconds per token of the sequence
    amx: bool = True  # see Candidate.amx
    side_amx: bool = True  # the same for the side context's layout (the other side of extra_buffers)

    @property
    def layout(self) -> str:
        return layout_name(self.extra_buffers, self.amx)

    @property
    def side_layout(self) -> str:
        return layout_name(not self.extra_buffers, self.side_amx)

    def label(self) -> str:
        fa = "auto" if self.flash_attn is None else ("on" if self.flash_attn else "off")
        threads = self.threads or "all"
        s = f"weights {LAYOUT_WORDS[self.layout]}, flash attention {fa}, {threads} threads ({self.source})"
        if self.step_s:
            s += f", step {self.step_s * 1e3:.1f} ms, {VERIFY_ROWS}-row pass {self.verify_s * 1e3:.1f} ms"
        if self.side_prefill_s:
            s += (f"; long prompts prefilled on {LAYOUT_WORDS[self.side_layout]} weights ({1 / self.side_prefill_s:.0f} "
                  f"tok/s against {1 / self.prefill_s:.0f})")
        return s + "".join(f"; ruled out {r}" for r in self.ruled_out)


LAYOUT_WORDS = {"plain": "plain", "repacked": "repacked", "repacked-noamx": "repacked without AMX"}


def thread_options(cpu_count: int) -> list[int]:
    """All cores, and half of them where hyperthreads may share a core's bandwidth."""
    return [cpu_count] + ([cpu_count // 2] if cpu_count >= 4 else [])


def candidates(cfg: EngineConfig, cpu_count: int, amx: bool = False) -> list[Candidate]:
    """Every combination of the settings the config leaves on auto (an explicit value is the only option).
    ``amx``: llama.cpp would repack into AMX buffers here, so repacking without AMX is a layout too."""
    extras = [cfg.cpu_extra_buffers] if cfg.cpu_extra_buffers is not None else [False, True]
    layouts = [(e, True) for e in extras] + ([(True, False)] if amx and True in extras else [])
    if cfg.flash_attn is not None:
        fas = [cfg.flash_attn]
    elif cfg.kv_type not in ("f16", "f32", "bf16"):
        fas = [True]  # a quantized V cache needs flash attention
    else:
        fas = [False, True]
    threads = [cfg.threads] if cfg.threads else thread_options(cpu_count)
    return [Candidate(e, f, t, a) for e, a in layouts for f in fas for t in threads]


def request_s(r: Timing, side: Timing | None = None) -> float:
    """The representative request's seconds on this candidate (long prompts prefilled on its side layout)."""
    prefill = min(r.prefill_s, side.prefill_s) if side is not None and side.prefill_s > 0 else r.prefill_s
    return REQUEST_PREFILL * prefill + REQUEST_STEPS * r.step_s + REQUEST_PASSES * r.verify_s


def pick(results: Sequence[Timing]) -> Timing | None:
    """The candidate with the cheapest representative request; ties go to the earlier (plain layout first)."""
    best, best_s = None, 0.0
    for r in results:
        t = request_s(r, side_for(r, results))
        if best is None or t < best_s:
            best, best_s = r, t
    return best


def side_for(best: Timing, results: Sequence[Timing]) -> Timing | None:
    """The fastest-prefilling layout on the other side of extra_buffers with the same threads and flash
    attention (its KV state is interchangeable), when it prefills at least SIDE_GAIN times faster."""
    c = best.candidate
    side = None
    for r in results:
        o = r.candidate
        if (o.extra_buffers != c.extra_buffers and o.flash_attn == c.flash_attn and o.threads == c.threads
                and r.prefill_s > 0 and best.prefill_s > 0 and r.copy_s > 0 and r.prefill_s * SIDE_GAIN < best.prefill_s
                and (side is None or r.prefill_s < side.prefill_s)):
            side = r
    return side


def _run(cmd: Sequence[str], timeout: float) -> tuple[int, str]:
    root = str(Path(__file__).resolve().parents[1])  # the child imports this package wherever tau runs from
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
    try:
        p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, check=False, env=env)
    except subprocess.TimeoutExpired:
        return -9, ""
    return p.returncode, p.stdout


def ruled_out_label(layout: str, rc: int) -> str:
    """How a layout whose child exited with ``rc`` is listed in Choice.ruled_out."""
    name = {"plain": "extra_buffers off", "repacked": "extra_buffers on"}.get(layout, "extra_buffers on, no AMX")
    return f"{name}: " + (f"signal {-rc}" if rc < 0 else f"exit {rc}")


def measure(model_path: str, cands: Sequence[Candidate], *, n_ctx: int = 2048, runner: Runner = _run,
            python: str = sys.executable) -> tuple[list[Timing], list[str]]:
    """Time the candidates, one child process per weight layout. Returns (results, ruled-out layouts)."""
    results: list[Timing] = []
    ruled_out: list[str] = []
    for layout in dict.fromkeys(c.layout for c in cands):
        group = [c for c in cands if c.layout == layout]
        arg = json.dumps({"model": model_path, "n_ctx": n_ctx, "candidates": [asdict(c) for c in group]})
        rc, out = runner([python, "-m", "engine.calibrate", arg], CHILD_TIMEOUT_S)
        got = []
        for line in out.splitlines():
            try:
                d = json.loads(line)
                got.append(Timing(Candidate(**d["candidate"]), float(d["step_s"]), float(d["verify_s"]),
                                  float(d.get("prefill_s", 0.0)), float(d.get("copy_s", 0.0))))
            except (ValueError, KeyError, TypeError):
                continue
        if rc != 0:  # a crash part-way rules the whole layout out: its kernels are not safe here
            ruled_out.append(ruled_out_label(layout, rc))
            continue
        results.extend(got)
    return results, ruled_out


def calibrated(path: Path | None, cfg: EngineConfig) -> Choice | None:
    """The cached choice, if one was measured for the settings this config leaves on auto."""
    d = load_profile(path).get("choice")
    if not isinstance(d, dict) or d.get("version") != CALIBRATION_VERSION:
        return None
    try:
        c = Choice(bool(d["extra_buffers"]), d["flash_attn"], int(d["threads"]), "calibrated",
                   float(d["step_s"]), float(d["verify_s"]), tuple(d.get("ruled_out", ())),
                   float(d.get("prefill_s", 0.0)), float(d.get("side_prefill_s", 0.0)), float(d.get("copy_s", 0.0)),
                   bool(d.get("amx", True)), bool(d.get("side_amx", True)))
    except (KeyError, TypeError, ValueError):
        return None
    if c.flash_attn is not None and not isinstance(c.flash_attn, bool):
        return None
    return c if Candidate(c.extra_buffers, bool(c.flash_attn), c.threads, c.amx) in _candidates(cfg) else None


def calibrate(path: Path | None, cfg: EngineConfig, *, runner: Runner = _run) -> Choice | None:
    """Measure, cache and return the choice (None when no candidate ran: the caller keeps its defaults)."""
    cands = _candidates(cfg)
    results, ruled_out = measure(cfg.model_path, cands, runner=runner)
    best = pick(results)
    if best is None:
        return None
    c, side = best.candidate, side_for(best, results)
    choice = Choice(c.extra_buffers, c.flash_attn, c.threads, "calibrated", best.step_s, best.verify_s,
                    tuple(ruled_out), best.prefill_s, side.prefill_s if side else 0.0,
                    max(best.copy_s, side.copy_s) if side else best.copy_s, c.amx,
                    side.candidate.amx if side else True)
    prof = load_profile(path)
    prof["choice"] = {**asdict(choice), "version": CALIBRATION_VERSION,
                      "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                      "measured": [{**asdict(t.candidate), "step_s": t.step_s, "verify_s": t.verify_s,
                                    "prefill_s": t.prefill_s, "copy_s": t.copy_s} for t in results]}
    prof["choice"].pop("source")
    save_profile(path, prof)
    return choice


def _candidates(cfg: EngineConfig) -> list[Candidate]:
    from engine import repack_backend

    return candidates(cfg, os.cpu_count() or 1, amx=repack_backend.amx_present())


def recalibrate(cfg: EngineConfig) -> Choice | None:
    """Measure again now (``tau models --calibrate``) and replace the cached choice for this build."""
    from engine import backend

    return calibrate(calibration_path(cfg.cache_dir, cfg.model_path, backend.build_id()), cfg)


def describe(cache_dir: str, model_path: str, cfg: EngineConfig | None = None,
             build: str | None = None) -> tuple[Choice, bool] | None:
    """(the calibrated choice, whether it is this build's): the one this llama.cpp build loads with
    (``build``: backend.build_id() unless given); where this build has none yet, the newest of any build
    of this model on this CPU. Another install's (a CI clone's) may be newer and say otherwise, so it is
    never shown ahead of this build's."""
    folder = Path(cache_dir) / "profiles"
    if not cache_dir or not folder.is_dir():
        return None
    cfg = cfg or EngineConfig(model_path=model_path)
    if build is None:
        from engine import backend

        build = backend.build_id()
    own = calibration_path(cache_dir, model_path, build)
    if own is not None and own.is_file():
        c = calibrated(own, cfg)
        if c is not None:
            return c, True
    files = sorted((f for f in folder.glob(calibration_stem(model_path) + "*-calibration.json") if f != own),
                   key=lambda p: p.stat().st_mtime, reverse=True)
    for f in files:  # this build's own file was read above
        c = calibrated(f, cfg)
        if c is not None:
            return c, False
    return None


# ---- the child -------------------------------------------------------------------------------


def _time_candidate(model, c: Candidate, n_ctx: int) -> tuple[float, float, float, float]:
    from engine.backend import Context

    ctx = Context(model, n_ctx=n_ctx, n_batch=N_BATCH, threads=c.threads, flash_attn=c.flash_attn)
    other = Context(model, n_ctx=n_ctx, n_batch=8, threads=c.threads, flash_attn=c.flash_attn)
    try:
        vocab = model.n_vocab
        at = CONTEXT_TOKENS
        toks = [(7 * i + 3) % vocab for i in range(at + STEPS + VERIFY_ROWS + 1)]
        ctx.decode(toks[:WARM_TOKENS], 0, all_logits=False)
        t0 = time.perf_counter()
        ctx.decode(toks[WARM_TOKENS:at], WARM_TOKENS, all_logits=False)
        prefill = (time.perf_counter() - t0) / PREFILL_TOKENS
        ctx.decode(toks[at:at + VERIFY_ROWS], at, all_logits=True)  # first-use costs of a wide pass
        ctx.truncate(at)
        step = float("inf")
        for i in range(STEPS):
            t0 = time.perf_counter()
            ctx.decode([toks[at + i]], at + i, all_logits=False)
            step = min(step, time.perf_counter() - t0)
        ctx.truncate(at)
        verify = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            ctx.decode(toks[at:at + VERIFY_ROWS], at, all_logits=True)
            verify = min(verify, time.perf_counter() - t0)
            ctx.truncate(at)
        copy = float("inf")
        for _ in range(2):  # the first copy also allocates the buffer
            t0 = time.perf_counter()
            ok = ctx.copy_seq_to(other)
            copy = min(copy, (time.perf_counter() - t0) / at)
        return step, verify, prefill, copy if ok else 0.0
    finally:
        other.close()
        ctx.close()


def child_main(arg: str) -> int:
    from engine import backend

    spec = json.loads(arg)
    backend.init("")
    cands = [Candidate(**d) for d in spec["candidates"]]
    model = backend.Model(spec["model"], gpu_layers=0, extra_buffers=cands[0].extra_buffers, amx=cands[0].amx)
    try:
        for c in cands:
            step, verify, prefill, copy = _time_candidate(model, c, int(spec["n_ctx"]))
            print(json.dumps({"candidate": asdict(c), "step_s": step, "verify_s": verify, "prefill_s": prefill,
                              "copy_s": copy}), flush=True)
    finally:
        model.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(child_main(sys.argv[1]))
