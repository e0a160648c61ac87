"""The bench harness end to end on a tiny model (structure and bookkeeping, not speed)."""

from __future__ import annotations

import pytest

from engine import bench
from engine.benchdata import workloads
from engine.benchdata.workloads import Workload


def test_bench_runs_every_configuration_side_by_side(tiny_engine, monkeypatch: pytest.MonkeyPatch) -> None:
    turn = ({"role": "user", "content": "a b c d e f a b c d e f a b c"},)
    wl = Workload("tiny", "agent", (turn, turn + ({"role": "assistant", "content": "a b"}, {"role": "user", "content": "c d"})),
                  max_tokens=12, repo={"x.txt": "a b c d e f"})
    monkeypatch.setitem(workloads.SUITES, "tiny", (wl,))
    results = bench.run_bench(tiny_engine, "tiny", ("greedy", "sampled"))
    names = [c.name for c in bench.CONFIGS if c.default]
    assert [r.config for r in results] == names * 2
    plain = results[0]
    assert plain.config == "plain" and plain.speedup == pytest.approx(1.0)
    assert plain.drift is not None and plain.drift > 0  # plain also ran after the others
    assert "closing plain run" in bench.format_table(results)
    for r in results:
        assert r.tokens > 0 and r.decode_tok_s > 0
        if r.config not in ("plain", "peer-lookup"):
            assert r.tau >= 1.0
    greedy = [r for r in results if r.mode == "greedy" and r.same_as_plain is not None]
    assert greedy and all(r.first_divergence is None or r.first_divergence >= 0 for r in greedy)
    table = bench.format_table(results)
    assert "peer-lookup" in table and "speedup" in table
    s = bench.summary(results)
    assert s["greedy_runs_compared"] == len(greedy)
    # the bench leaves the overlay as it found it
    assert tiny_engine.ngram.n_sources == 0


def test_unknown_suite() -> None:
    with pytest.raises(ValueError, match="unknown suite"):
        bench.run_bench(None, "nope")


def test_key_length_sweep_configs_use_their_own_overlay(tiny_engine, monkeypatch: pytest.MonkeyPatch) -> None:
    wl = Workload("tiny", "edit", (({"role": "user", "content": "a b c a b c a b c"},),), max_tokens=8)
    monkeypatch.setitem(workloads.SUITES, "tiny", (wl,))
    results = bench.run_bench(tiny_engine, "tiny", ("greedy",), ("plain", "ngram-k2", "ngram-k12"))
    assert [r.config for r in results] == ["plain", "ngram-k2", "ngram-k12"]
    assert set(tiny_engine.speculator.slots) == {"ngram", "draft"}
    for r in results[1:]:
        assert set(r.drafted) <= {r.config}


def test_bracket_pools_the_opening_and_closing_plain_runs() -> None:
    def run(tokens: int, dec: float) -> bench.RunResult:
        return bench.RunResult("w", "greedy", "plain", tokens, tokens / dec, tokens / (dec + 1), 1.0, [], {}, {},
                               decode_s=dec, wall_s=dec + 1)

    base = bench.bracket(run(100, 10.0), run(100, 20.0))
    assert base.decode_tok_s == pytest.approx(200 / 30)
    assert base.wall_tok_s == pytest.approx(200 / 32)
    assert base.drift == pytest.approx(0.5)
    assert base.tokens == 100
