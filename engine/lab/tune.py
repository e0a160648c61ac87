"""``tau tune``: pick the engine's settings for this model, machine and workload by measuring.

A small coordinate-descent sweep from the defaults over the settings that move decode
speed: whether the draft model drafts, the window limit (``max_window``), the n-gram key
length and the thread count. Each candidate runs the same jobs (edit tasks on the user's
own files, turns from their recent sessions, or a built-in edit workload), greedy and
sampled (temperature 0.6, top-p 0.95); candidates of one setting are interleaved job by
job so they share the machine's load. A candidate replaces the current best only when it
is at least ``min_gain`` faster; at the end the defaults and the choice are measured once
more, side by side, and the choice is kept only if it still wins.

The result goes into the engine's profile JSON (engine.profile, beside the verify-cost
curve) under ``"tuned"``; engine.tuned is how ``LocalEngine`` reads it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.drafters.ngram import DEFAULT_KEY_LEN
from engine.lab.tunejobs import Job, builtin_jobs, collect_jobs, repo_jobs, session_jobs  # noqa: F401  (the lab's API)
from engine.policy import Acceptance
from engine.profile import load_profile, save_profile
from engine.spec import DEFAULT_MAX_WINDOW, SpecConfig, spec_preset
from engine.tuned import Setting, apply_tuned, tuned_settings, tuned_spec  # noqa: F401  (the lab's API)
from engine.types import DoneEvent, GenerateRequest, SamplingParams

Progress = Callable[[str, float], None]

WINDOWS = (8, 16, 24, DEFAULT_MAX_WINDOW)
KEYS = (3, 4, 6)
GREEDY = SamplingParams(temperature=0.0)
SAMPLED = SamplingParams(temperature=0.6, top_p=0.95, seed=1234)
MODES = {"greedy": GREEDY, "sampled": SAMPLED}


# ---- measuring -------------------------------------------------------------------------


@dataclass
class Score:
    tokens: int = 0
    decode_s: float = 0.0
    by_mode: dict[str, list[float]] = field(default_factory=dict)  # mode -> [tokens, seconds]

    @property
    def tok_s(self) -> float:
        return self.tokens / self.decode_s if self.decode_s > 0 else 0.0

    pairs: dict[str, float] = field(default_factory=dict)  # "job/mode" -> tok/s of that run

    def add(self, mode: str, done: DoneEvent, job: str = "") -> None:
        st = done.stats
        self.tokens += st.completion_tokens
        self.decode_s += st.decode_s
        t = self.by_mode.setdefault(mode, [0.0, 0.0])
        t[0] += st.completion_tokens
        t[1] += st.decode_s
        if st.decode_s > 0:
            self.pairs[f"{job}/{mode}"] = st.completion_tokens / st.decode_s

    def mode_tok_s(self, mode: str) -> float:
        t = self.by_mode.get(mode)
        return t[0] / t[1] if t and t[1] > 0 else 0.0


class Tuner:
    """Runs jobs on a loaded ``LocalEngine`` under different settings (switched in place)."""

    def __init__(
        self,
        engine: Any,
        jobs: Sequence[Job],
        modes: Sequence[str] = ("greedy", "sampled"),
        progress: Progress | None = None,
    ) -> None:
        self.engine = engine
        self.jobs = list(jobs)
        self.modes = list(modes)
        self.say = progress or (lambda _m, _f: None)
        self.has_draft = "draft" in engine.speculator.slots
        self.base_spec = (
            engine.cfg.spec if engine.cfg.spec in ("auto", "ngram", "draft", "mtp", "off") else "auto"
        )
        self._prompts = {j.name: engine.chat_prompt(list(j.messages)) for j in self.jobs}
        self._current: Setting | None = None
        self.runs = 0
        self.total_runs = 0
        self.log: list[dict[str, Any]] = []

    def defaults(self) -> Setting:
        cfg = self.engine.cfg
        return Setting(
            max_window=cfg.max_window or DEFAULT_MAX_WINDOW,
            ngram_key=cfg.ngram_key or DEFAULT_KEY_LEN,
            threads=int(self.engine.ctx.threads),
            draft=self.has_draft,
        )

    def _apply(self, s: Setting) -> None:
        if self._current == s:
            return
        eng = self.engine
        cur = self._current

        def switch() -> None:
            from engine.drafters.ngram import NgramDrafter
            from engine.slot import DrafterSlot

            if cur is None or cur.threads != s.threads:
                eng.ctx.set_threads(s.threads)
                if getattr(eng, "draft_ctx", None) is not None:
                    eng.draft_ctx.set_threads(s.threads)
            if cur is None or cur.ngram_key != s.ngram_key:
                ng = NgramDrafter(s.ngram_key)
                eng.ngram = ng
                eng.speculator.slots["ngram"] = DrafterSlot(ng, lookup=True)

        eng.call(switch)
        self._current = s

    def spec_for(self, s: Setting) -> SpecConfig:
        spec = spec_preset(self.base_spec, s.max_window)
        if not s.draft:
            spec = replace(spec, drafters=tuple(d for d in spec.drafters if d != "draft"))
        return spec

    def run_one(self, s: Setting, job: Job, mode: str, score: Score) -> None:
        self._apply(s)
        eng = self.engine
        eng.speculator.acceptance = Acceptance()  # each run learns from scratch
        eng.ngram.reset()
        req = GenerateRequest(self._prompts[job.name], max_tokens=job.max_tokens, sampling=MODES[mode])
        done: DoneEvent | None = None
        for ev in eng.stream(req, spec=self.spec_for(s)):
            if isinstance(ev, DoneEvent):
                done = ev
        if done is None or done.error:
            raise RuntimeError(f"tune run failed: {done.error if done else 'no result'}")
        score.add(mode, done, job.name)
        self.runs += 1
        self.log.append(
            {
                "setting": s.to_profile(),
                "job": job.name,
                "mode": mode,
                "tokens": done.stats.completion_tokens,
                "decode_s": round(done.stats.decode_s, 4),
                "tau": round(done.stats.tau, 3),
            }
        )
        self.say(f"tune: {s.label()} · {job.name} {mode}", min(0.999, self.runs / max(1, self.total_runs)))

    def compare(self, settings: Sequence[Setting]) -> list[Score]:
        """Each setting on every job and mode; interleaved job by job (one prefill per job)."""
        scores = [Score() for _ in settings]
        for job in self.jobs:
            for s, sc in zip(settings, scores, strict=True):
                for mode in self.modes:
                    self.run_one(s, job, mode, sc)
        return scores


@dataclass
class TuneResult:
    default: Setting
    chosen: Setting
    default_tok_s: float
    chosen_tok_s: float
    by_mode: dict[str, tuple[float, float]]  # mode -> (default tok/s, chosen tok/s) in the final pairing
    steps: list[dict[str, Any]]
    jobs: list[str]
    seconds: float
    profile: str = ""

    @property
    def gain(self) -> float:
        return self.chosen_tok_s / self.default_tok_s - 1 if self.default_tok_s else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "default": self.default.to_profile(),
            "chosen": self.chosen.to_profile(),
            "default_tok_s": round(self.default_tok_s, 3),
            "chosen_tok_s": round(self.chosen_tok_s, 3),
            "gain_pct": round(self.gain * 100, 2),
            "by_mode": {m: [round(a, 3), round(b, 3)] for m, (a, b) in self.by_mode.items()},
            "steps": self.steps,
            "jobs": self.jobs,
            "seconds": round(self.seconds, 1),
            "profile": self.profile,
        }


def thread_options(default: int, cpu_count: int | None = None) -> list[int]:
    n = cpu_count or os.cpu_count() or default
    opts = {default, max(1, n - 1), max(1, n // 2), n}
    return sorted((t for t in opts if t != default and t >= 1), reverse=True)


def sweep(
    tuner: Tuner, *, min_gain: float = 0.03, threads: Sequence[int] | None = None, quick: bool = False
) -> TuneResult:
    """Coordinate descent from the defaults; returns the choice and its measured gain."""
    t0 = time.perf_counter()
    base = tuner.defaults()
    dims: list[tuple[str, list[Setting]]] = []
    # candidate lists are built lazily from the current best; counted up front for the progress bar
    n_threads = list(threads) if threads is not None else thread_options(base.threads)
    plan = [
        ("draft", 1 if tuner.has_draft else 0),
        ("max_window", len(WINDOWS) - 1),
        ("ngram_key", len(KEYS) - 1),
        ("threads", len(n_threads)),
    ]
    if quick:
        plan = [p for p in plan if p[0] in ("draft", "max_window")]
    per_setting = len(tuner.jobs) * len(tuner.modes)
    tuner.total_runs = per_setting * (sum(k + 1 for _, k in plan if k) + 2)
    best = base
    steps: list[dict[str, Any]] = []
    best_score: float | None = None
    for name, k in plan:
        if not k:
            continue
        if name == "draft":
            cands = [replace(best, draft=not best.draft)]
        elif name == "max_window":
            cands = [replace(best, max_window=w) for w in WINDOWS if w != best.max_window]
        elif name == "ngram_key":
            cands = [replace(best, ngram_key=x) for x in KEYS if x != best.ngram_key]
        else:
            cands = [replace(best, threads=t) for t in n_threads if t != best.threads]
        if not cands:
            continue
        dims.append((name, cands))
        scores = tuner.compare([best] + cands)
        ref = scores[0].tok_s
        row = {
            "setting": name,
            "current": best.to_profile(),
            "current_tok_s": round(ref, 3),
            "candidates": [
                {"value": getattr(c, name), "tok_s": round(s.tok_s, 3)}
                for c, s in zip(cands, scores[1:], strict=True)
            ],
        }
        win = max(range(len(cands)), key=lambda i: scores[i + 1].tok_s)
        if scores[win + 1].tok_s > ref * (1 + min_gain):
            best = cands[win]
            row["chosen"] = getattr(best, name)
        else:
            row["chosen"] = getattr(best, name)
        best_score = max(ref, scores[win + 1].tok_s)
        steps.append(row)
    del best_score
    # the final, paired measurement: defaults against the choice
    if best != base:
        fin = tuner.compare([base, best])
        d, c = fin
        wins = [c.pairs[k] > d.pairs[k] for k in d.pairs if k in c.pairs]
        consistent = sum(wins) > len(wins) / 2  # most job/mode pairs agree, not one lucky run
        if c.tok_s < d.tok_s * (1 + min_gain / 2) or not consistent:
            why = (
                "slower overall"
                if c.tok_s < d.tok_s * (1 + min_gain / 2)
                else f"faster in only {sum(wins)} of {len(wins)} job/mode pairs"
            )
            steps.append(
                {
                    "setting": "final",
                    "note": f"the choice did not hold up against the defaults ({why}): keeping the defaults",
                    "default_tok_s": round(d.tok_s, 3),
                    "choice_tok_s": round(c.tok_s, 3),
                    "choice": best.to_profile(),
                }
            )
            best = base
            c = d
    else:
        (d,) = tuner.compare([base])
        c = d
    by_mode = {m: (d.mode_tok_s(m), c.mode_tok_s(m)) for m in tuner.modes}
    # the same setting is measured again in later stages: how much did the machine's speed move?
    seen: dict[Setting, list[float]] = {}
    for step in steps:
        if "current" in step:
            cur: dict[str, Any] = step["current"]
            seen.setdefault(Setting(**cur), []).append(float(step["current_tok_s"]))
    seen.setdefault(base, []).append(d.tok_s)
    drift = max((max(v) / min(v) for v in seen.values() if len(v) > 1 and min(v) > 0), default=1.0)
    if drift > 1 + 2 * min_gain:
        steps.append(
            {
                "setting": "noise",
                "note": f"the same setting measured {drift:.2f}x apart between stages: the machine is busy, "
                "differences smaller than that are noise (tune again on an idle machine)",
                "drift": round(drift, 3),
            }
        )
    return TuneResult(
        base, best, d.tok_s, c.tok_s, by_mode, steps, [j.name for j in tuner.jobs], time.perf_counter() - t0
    )


def save_tuned(path: Path | None, result: TuneResult) -> Path | None:
    """Write the choice into the profile the engine loaded (``LocalEngine.profile_file``)."""
    if path is None:
        return None
    prof = load_profile(path)
    prof["tuned"] = {
        **result.chosen.to_profile(),
        "gain_pct": round(result.gain * 100, 2),
        "default_tok_s": round(result.default_tok_s, 3),
        "tuned_tok_s": round(result.chosen_tok_s, 3),
        "jobs": result.jobs,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    save_profile(path, prof)
    return path


def format_result(r: TuneResult) -> str:
    lines = [f"workload: {', '.join(r.jobs)} ({len(r.jobs)} jobs, greedy + sampled)"]
    for s in r.steps:
        if s["setting"] == "final":
            lines.append(
                f"  final check: {s['note']} ({s['default_tok_s']:.2f} vs {s['choice_tok_s']:.2f} tok/s)"
            )
            continue
        if s["setting"] == "noise":
            lines.append(f"  warning: {s['note']}")
            continue
        cands = "  ".join(f"{c['value']}: {c['tok_s']:.2f}" for c in s["candidates"])
        cur = s["current"][s["setting"]]
        lines.append(f"  {s['setting']:<10} {cur}: {s['current_tok_s']:.2f}  {cands}  -> {s['chosen']}")
    lines.append(f"defaults: {r.default.label()}: {r.default_tok_s:.2f} tok/s")
    lines.append(f"chosen:   {r.chosen.label()}: {r.chosen_tok_s:.2f} tok/s ({r.gain * 100:+.1f}%)")
    for m, (a, b) in r.by_mode.items():
        lines.append(f"  {m:<8} {a:.2f} -> {b:.2f} tok/s")
    if r.chosen == r.default:
        lines.append("the defaults are already the best of what was measured")
    return "\n".join(lines)
