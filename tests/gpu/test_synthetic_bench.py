"""``run_synthetic`` end to end on the tiny shape, on the CPU (a few seconds)."""

from __future__ import annotations

import json

from engine.lab.gpu.synthetic_bench import ADAPTIVE_CASES, SPEC_CASES, run_synthetic
from engine.lab.gpu.synthetic_device import bandwidth_for
from engine.lab.gpu.synthetic_report import format_table


def test_bandwidth_table_matches_longest_name_first() -> None:
    assert bandwidth_for("NVIDIA H200") == 4800
    assert bandwidth_for("NVIDIA H100 80GB HBM3") == 3350
    assert bandwidth_for("NVIDIA GeForce RTX 4090") == 1008
    assert bandwidth_for("NVIDIA GeForce RTX 4080 SUPER") == 736
    assert bandwidth_for("Mystery GPU") == 0


def test_run_synthetic_tiny(tiny_synth, tmp_path) -> None:
    seen: list[str] = []
    res = run_synthetic(
        "tiny",
        tmp_path,
        model_path=str(tiny_synth),
        progress=lambda m, f: seen.append(m),
        n_ctx=512,
        threads=1,
        tokens=20,
        repeats=1,
        curve_reps=1,
        curve_max=5,
        extras=False,
        prompt_tokens=32,
        spec_cases=(SPEC_CASES[0],),
        adaptive_cases=ADAPTIVE_CASES[:1],
    )
    assert res["errors"] == {}
    assert res["extra_buffers"] is False  # CPU weights stay in plain buffers unless asked
    assert res["plain"]["same_tokens"] is True
    assert res["plain"]["raw_tok_s"] > 0 and "overhead_pct" in res["plain"]
    assert sorted(res["verify_ms"]) == list(range(1, 6))
    cases = {r["case"]: r for r in res["spec"]}
    assert abs(cases["tau4-K3"]["tau"] - 4) < 0.5
    assert cases["tau4-K3"]["predicted_tok_s"] > 0
    assert res["fit"]["fits"] is True
    assert json.loads((tmp_path / "synthetic-tiny-result.json").read_text())["shape"] == "tiny"
    assert [r["estimator"] for r in res["adaptive"]] == ["shipped", "conditional"]
    table = format_table(res)
    assert "plain decode" in table and "tau4-K3" in table
    assert "verify-cost curve" in seen


def test_conditional_acceptance_learns_a_constant_rate() -> None:
    import random

    from engine.lab.gpu.synthetic_loops import ConditionalAcceptance

    acc = ConditionalAcceptance()
    rng = random.Random(0)
    for _ in range(400):
        k = 12
        n = 0
        while n < k and rng.random() < 0.8:
            n += 1
        acc.update("replay:greedy", 0, k, n)
    rates = acc.rates("replay:greedy", 0, 8)
    assert all(0.7 < r < 0.9 for r in rates), rates
