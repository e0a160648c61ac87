"""``tau tune``: the sweep on a fake engine with known speeds, the workload builders, the profile hook."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.config import EngineConfig
from engine.lab import tune
from engine.profile import load_profile, profile_path
from engine.spec import DEFAULT_MAX_WINDOW, SpecConfig, spec_preset
from engine.types import DoneEvent, GenStats


@dataclass
class _Ctx:
    threads: int = 2

    def set_threads(self, n: int) -> None:
        self.threads = n


@dataclass
class _Spec:
    slots: dict = field(default_factory=lambda: {"ngram": object(), "draft": object()})
    acceptance: object = None


class _Ngram:
    def reset(self) -> None:
        pass


class FakeEngine:
    """Speed is a known function of the settings: best at window 8, key 3, draft off, 2 threads."""

    def __init__(self, cfg: EngineConfig) -> None:
        self.cfg = cfg
        self.ctx = _Ctx()
        self.draft_ctx = _Ctx()
        self.speculator = _Spec()
        self.ngram = _Ngram()
        self.gpu = False
        self.seen: list[SpecConfig] = []

    def call(self, fn):
        return fn()

    def chat_prompt(self, messages, tools=None, add_generation_prompt=True) -> str:
        return "\n".join(m["content"] for m in messages)

    def stream(self, req, cancel=None, spec=None):
        self.seen.append(spec)
        key = self.speculator.slots["ngram"].drafter.key_lens[0]
        rate = 100.0
        rate *= 1.3 if spec.max_window == 8 else 1.0
        rate *= 1.1 if key == 3 else 1.0
        rate *= 1.2 if "draft" not in spec.drafters else 1.0
        rate *= 1.0 if self.ctx.threads == 2 else 0.6
        n = req.max_tokens
        yield DoneEvent(
            "x", (1,) * n, "length", GenStats(completion_tokens=n, decode_s=n / rate, verify_passes=n)
        )


def test_sweep_finds_the_known_best_and_reports_the_gain(tmp_path) -> None:
    cfg = EngineConfig(model_path=str(tmp_path / "m.gguf"), cache_dir=str(tmp_path / "cache"))
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    eng = FakeEngine(cfg)
    jobs = tune.builtin_jobs(32)
    seen: list[float] = []
    tuner = tune.Tuner(eng, jobs, progress=lambda _m, f: seen.append(f))
    r = tune.sweep(tuner, threads=[1])
    assert r.default == tune.Setting(DEFAULT_MAX_WINDOW, 4, 2, True)
    assert r.chosen == tune.Setting(8, 3, 2, False)
    assert abs(r.gain - (1.3 * 1.1 * 1.2 - 1)) < 1e-6
    assert tuner.runs == tuner.total_runs and seen and max(seen) < 1.0
    assert {s.max_window for s in eng.seen} == set(tune.WINDOWS) == {8, 16, 24, 63}
    text = tune.format_result(r)
    assert "chosen:   window 8, key 3, 2 threads, draft off" in text
    want = profile_path(cfg.cache_dir, cfg.model_path, False, 2)
    path = tune.save_tuned(want, r)
    assert path == want and want is not None and want.exists()
    prof = load_profile(path)
    assert tune.tuned_settings(prof) == r.chosen and prof["tuned"]["gain_pct"] > 70


def test_defaults_kept_when_nothing_wins(tmp_path) -> None:
    class Flat(FakeEngine):
        def stream(self, req, cancel=None, spec=None):
            n = req.max_tokens
            yield DoneEvent(
                "x", (1,) * n, "length", GenStats(completion_tokens=n, decode_s=n / 50, verify_passes=n)
            )

    eng = Flat(EngineConfig(model_path="m.gguf"))
    r = tune.sweep(tune.Tuner(eng, tune.builtin_jobs(16), modes=("greedy",)), threads=[1])
    assert r.chosen == r.default and r.gain == 0
    assert "already the best" in tune.format_result(r)


def test_profile_hook_helpers() -> None:
    assert tune.tuned_settings({}) is None
    assert tune.tuned_settings({"tuned": {"max_window": "x"}}) is None
    s = tune.tuned_settings(
        {"tuned": {"max_window": 8, "ngram_key": 3, "threads": 1, "draft": False, "gain_pct": 9}}
    )
    assert s == tune.Setting(8, 3, 1, False)
    cfg = EngineConfig(model_path="m", max_window=24)
    out = tune.apply_tuned(cfg, s)
    assert (out.max_window, out.ngram_key, out.threads) == (24, 3, 1)  # the user's explicit window wins
    assert tune.apply_tuned(cfg, None) is cfg
    auto = spec_preset("auto")
    assert "draft" not in tune.tuned_spec(auto, s).drafters
    assert tune.tuned_spec(spec_preset("draft"), s, "draft").drafters == ("draft",)  # asked for explicitly
    assert tune.tuned_spec(auto, None) is auto


def test_workload_builders(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f(x):\n    return x + 1\n" * 40)
    (tmp_path / "tiny.py").write_text("x = 1\n")
    (tmp_path / "notes.md").write_text("# notes\n" * 200)
    jobs = tune.repo_jobs(tmp_path, n=3)
    assert [j.name for j in jobs] == ["repo:a.py"]
    assert "```python" in jobs[0].messages[-1]["content"]
    convs = [
        [
            {"role": "user", "content": "fix the bug in parse()"},
            {
                "role": "assistant",
                "content": "Here is the fixed parse():\n\n```python\ndef parse(s):\n    return s.split()\n```",
            },
        ]
    ]
    sj = tune.session_jobs(convs)
    assert len(sj) == 1 and sj[0].messages[-1]["role"] == "user"
    assert tune.collect_jobs(None, [], max_tokens=32)[0].kind == "builtin"
    both = tune.collect_jobs(tmp_path, convs, n_jobs=3)
    assert [j.kind for j in both] == ["session", "repo"]


def test_cli_registers_tune() -> None:
    from app.cli.main import build_parser

    args = build_parser().parse_args(
        ["tune", "--quick", "--tokens", "32", "--dry-run", "--threads-options", "2,1"]
    )
    assert args.command == "tune" and args.quick and args.tokens == 32
    assert args.threads_options == "2,1" and args.dry_run


def test_an_inconsistent_win_is_not_kept_and_drift_is_reported() -> None:
    class Mixed(FakeEngine):
        """Window 8 is much faster greedy but slower sampled; the machine slows down over time."""

        calls = 0

        def stream(self, req, cancel=None, spec=None):
            self.calls += 1
            greedy = req.sampling.temperature == 0
            rate = 100.0 / (1 + self.calls / 10)
            if spec.max_window == 8:
                rate *= 3.0 if greedy else 0.8
            n = req.max_tokens
            yield DoneEvent(
                "x", (1,) * n, "length", GenStats(completion_tokens=n, decode_s=n / rate, verify_passes=n)
            )

    eng = Mixed(EngineConfig(model_path="m.gguf"))
    r = tune.sweep(tune.Tuner(eng, tune.builtin_jobs(16)), threads=[1], quick=True)
    assert r.chosen == r.default
    notes = [s["note"] for s in r.steps if "note" in s]
    assert any("faster in only" in n for n in notes)
    assert any("machine is busy" in n for n in notes)
    assert "warning:" in tune.format_result(r)
