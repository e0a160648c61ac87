"""``run_synthetic`` end to end on the tiny shape, on the CPU (a few seconds)."""

from __future__ import annotations

import json

from engine.gpu.synthetic_bench import bandwidth_for, format_table, run_synthetic


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
        n_ctx=1024,
        threads=1,
        tokens=24,
        repeats=1,
        curve_reps=1,
        curve_max=9,
        extras=False,
    )
    assert res["errors"] == {}
    assert res["plain"]["same_tokens"] is True
    assert res["plain"]["raw_tok_s"] > 0 and "overhead_pct" in res["plain"]
    assert sorted(res["verify_ms"]) == list(range(1, 10))
    cases = {r["case"]: r for r in res["spec"]}
    assert abs(cases["tau4-K3"]["tau"] - 4) < 0.5 and abs(cases["tau8-K7"]["tau"] - 8) < 1.5
    assert cases["tau4-K3"]["predicted_tok_s"] > 0
    assert res["fit"]["fits"] is True
    assert json.loads((tmp_path / "synthetic-tiny-result.json").read_text())["shape"] == "tiny"
    table = format_table(res)
    assert "plain decode" in table and "tau4-K3" in table
    assert "verify-cost curve" in seen
