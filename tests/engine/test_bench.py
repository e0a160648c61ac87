"""The bench harness end to end on a tiny model (structure and bookkeeping, not speed)."""

from __future__ import annotations

import pytest

import app.wire  # noqa: F401  (registers the chat formats: the tiny model has no template)
from engine.lab import bench, benchreport, benchresult, benchsim
from engine.lab.benchdata import workloads
from engine.lab.benchdata.workloads import Workload


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
    assert plain.simulated is not None and plain.simulated["ngram"] > 0 and plain.simulated["ceiling"] >= 1.0
    assert "simulated: ngram" in benchreport.format_table(results)
    assert plain.drift is not None and plain.drift > 0  # plain also ran after the others
    assert "closing plain run" in benchreport.format_table(results)
    for r in results:
        assert r.tokens > 0 and r.decode_tok_s > 0
        if r.config not in ("plain", "peer-lookup"):
            assert r.tau >= 1.0
    greedy = [r for r in results if r.mode == "greedy" and r.same_as_plain is not None]
    assert greedy and all(r.first_divergence is None or r.first_divergence >= 0 for r in greedy)
    table = benchreport.format_table(results)
    assert "peer-lookup" in table and "speedup" in table
    s = benchreport.summary(results)
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
    def run(tokens: int, dec: float) -> benchresult.RunResult:
        return benchresult.RunResult("w", "greedy", "plain", tokens, tokens / dec, tokens / (dec + 1), 1.0, [], {}, {},
                               decode_s=dec, wall_s=dec + 1)

    base = benchresult.bracket(run(100, 10.0), run(100, 20.0))
    assert base.decode_tok_s == pytest.approx(200 / 30)
    assert base.wall_tok_s == pytest.approx(200 / 32)
    assert base.drift == pytest.approx(0.5)
    assert base.tokens == 100


def test_divergence_gap_is_plains_top2_gap_in_the_right_turn(tiny_engine) -> None:
    import numpy as np

    t1 = ({"role": "user", "content": "a b c d"},)
    t2 = t1 + ({"role": "assistant", "content": "e f"}, {"role": "user", "content": "g h"})
    wl = Workload("tiny", "agent", (t1, t2), max_tokens=6)
    base = bench.run_config(tiny_engine, wl, "greedy", bench.CONFIGS[0])
    n1 = base.turn_lens[0]
    assert len(base.turn_lens) == 2 and sum(base.turn_lens) == len(base.token_ids)

    def direct(turn: tuple[dict, ...], before: list[int]) -> float:
        toks = tiny_engine.tokenize(tiny_engine.chat_prompt(list(turn))) + before

        def f() -> float:
            tiny_engine.target.rollback(0)
            logits = np.array(tiny_engine.ctx.decode(toks, 0, all_logits=False)[-1])
            tiny_engine.target.kv = list(toks)
            top = np.sort(logits)[-2:]
            return float(top[1] - top[0])

        return float(tiny_engine.call(f))

    i = n1 + 2  # the third token of the second turn
    assert benchsim.divergence_gap(tiny_engine, wl, base, i) == pytest.approx(direct(t2, base.token_ids[n1:i]), abs=1e-4)
    assert benchsim.divergence_gap(tiny_engine, wl, base, 1) == pytest.approx(direct(t1, base.token_ids[:1]), abs=1e-4)
    assert benchsim.divergence_gap(tiny_engine, wl, base, len(base.token_ids) + 1) is None


def test_rounds_rotate_the_order_vary_the_seed_and_pool(tiny_engine, monkeypatch: pytest.MonkeyPatch) -> None:
    wl = Workload("tiny", "edit", (({"role": "user", "content": "a b c a b c a b c"},),), max_tokens=8)
    monkeypatch.setitem(workloads.SUITES, "tiny", (wl,))
    calls: list[tuple[str, int | None]] = []
    plain_speeds: list[float] = []
    real = bench.run_config

    def spy(engine, wl, mode, cfg, rnd=0):
        calls.append((cfg.name, bench.round_params(mode, rnd).seed))
        r = real(engine, wl, mode, cfg, rnd)
        if cfg.name == "plain":
            plain_speeds.append(r.decode_tok_s)
        return r

    monkeypatch.setattr(bench, "run_config", spy)
    results = bench.run_bench(tiny_engine, "tiny", ("sampled",), ("plain", "ngram", "auto"), rounds=3)
    assert [name for name, _ in calls] == [
        "plain", "ngram", "auto", "plain",
        "plain", "auto", "ngram", "plain",
        "plain", "ngram", "auto", "plain",
    ]
    seeds = [seed for _, seed in calls]
    assert seeds[0:4] == [bench.SAMPLED.seed] * 4 and seeds[4:8] == [bench.SAMPLED.seed + 1] * 4
    assert [r.config for r in results] == ["plain", "ngram", "auto"]
    plain, ngram, _ = results
    assert all(len(r.round_speedups) == 3 for r in results)
    assert plain.tokens == 3 * 8 and ngram.tokens == 3 * 8  # the rounds' tokens are pooled
    # all six plain runs (two a round) pooled: a speed between the slowest and the fastest of them
    assert min(plain_speeds) <= plain.decode_tok_s <= max(plain_speeds)
    assert ngram.speedup == pytest.approx(ngram.decode_tok_s / plain.decode_tok_s)
    assert "rounds" in benchreport.format_table(results)
    with pytest.raises(ValueError, match="rounds"):
        bench.run_bench(tiny_engine, "tiny", ("greedy",), rounds=0)


def test_pool_keeps_a_round_that_differs_from_plain() -> None:
    def run(same: bool, div: int | None, speed: float) -> benchresult.RunResult:
        r = benchresult.RunResult("w", "greedy", "ngram", 10, 10 / speed, 10 / speed, 2.0, [], {"ngram": 4}, {"ngram": 3},
                            decode_s=speed, wall_s=speed)
        r.same_as_plain, r.first_divergence, r.speedup = same, div, 1 / speed
        return r

    p = benchresult.pool([run(True, None, 1.0), run(False, 7, 2.0)])
    assert p.same_as_plain is False and p.first_divergence == 7
    assert p.tokens == 20 and p.decode_tok_s == pytest.approx(20 / 3.0)
    assert p.drafted == {"ngram": 8} and p.tau == pytest.approx(2.0)
    assert p.round_speedups == [1.0, 0.5]


def test_cli_refuses_bad_rounds_before_loading_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli.main import main

    assert main(["bench", "--rounds", "0", "--suite", "new"]) != 0
    assert "--rounds" in capsys.readouterr().err


def test_cli_takes_the_same_distribution_mode_and_refuses_others(capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli.main import main

    assert main(["bench", "--modes", "sampled,hot", "--suite", "new"]) != 0
    err = capsys.readouterr().err
    assert "--modes" in err and "sampled-llama" in err and len(err.strip().splitlines()) == 1


def test_requests_cut_a_long_run_to_the_chosen_requests(capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli.main import main

    t = [({"role": "user", "content": str(i)},) for i in range(5)]
    wl = Workload("many", "long", tuple(t), repo={"x.txt": "x"})
    one = Workload("one", "edit", (t[0],))
    (cut,) = bench.select_requests((wl, one), [3, 1])
    assert cut.turns == (t[3], t[1]) and cut.repo == wl.repo and cut.name == "many"
    with pytest.raises(ValueError, match="requests 0-4, not 5"):
        bench.select_requests((wl,), [1, 5])
    with pytest.raises(ValueError, match="several requests"):
        bench.select_requests((one,), [0])
    for bad, said in (("38", "not 38"), ("3,x", "numbers"), (",", "comma list")):  # refused before a model loads
        assert main(["bench", "--suite", "long", "--requests", bad]) != 0
        assert said in capsys.readouterr().err


def test_paired_run_alternates_configurations_request_by_request(tiny_engine, monkeypatch: pytest.MonkeyPatch) -> None:
    first = ({"role": "user", "content": "a b c d e f a b c d e f a b c"},)
    turns = (first, first + ({"role": "assistant", "content": "a b"}, {"role": "user", "content": "c d"}), first)
    wl = Workload("tiny", "long", turns, max_tokens=12, repo={"x.txt": "a b c d e f"})
    monkeypatch.setitem(workloads.SUITES, "tiny", (wl,))
    order: list[str] = []
    learned: list[object] = []
    real_turn = bench._turn

    def spy(engine, wl, turn, cfg, params, prompt=None):
        order.append(cfg.name)
        learned.append(engine.speculator.acceptance)
        return real_turn(engine, wl, turn, cfg, params, prompt)

    monkeypatch.setattr(bench, "_turn", spy)
    monkeypatch.setattr(benchresult, "TIMED_REQUEST", 1)  # the tiny replies are short: time them all
    results = bench.run_bench(tiny_engine, "tiny", ("greedy",), ("plain", "ngram"), paired=True)
    assert order == ["plain", "ngram", "ngram", "plain", "plain", "ngram"]  # no closing plain run: nothing to bracket
    assert len({id(a) for a in learned}) == 1  # what the policy learned carries over the requests
    plain, ngram = results
    assert plain.drift is None and len(ngram.request_ratios) == 3 and ngram.worst_request is not None
    assert plain.modelled == 1.0 and ngram.modelled is not None and ngram.modelled > 0
    assert len(ngram.request_modelled) == 3 and ngram.worst_modelled == min(ngram.request_modelled)
    for r in results:  # each request's time, and the host work within it
        assert len(r.request_decode_s) == len(r.request_draft_s) == 3
        assert all(0 <= h <= s for h, s in zip(r.request_draft_s, r.request_decode_s, strict=True))
        assert sum(r.request_decode_s) == pytest.approx(r.decode_s, abs=1e-3)
        assert r.to_dict()["request_decode_s"] == r.request_decode_s
        assert len(r.request_step_ms) == 3 and all(0 < ms <= 1000 * s for ms, s in zip(r.request_step_ms, r.request_decode_s, strict=True))
    assert ngram.worst_timed_steps is not None and min(ngram.worst_timed_steps) > 0
    assert "modelled: worst" in benchreport.format_table(results) and "plain's" in benchreport.format_table(results)
    assert tiny_engine.ngram.n_sources == 0


def test_paired_run_takes_plain_and_one_other() -> None:
    with pytest.raises(ValueError, match="plain and one other"):
        bench.run_bench(None, "long", ("greedy",), ("plain", "ngram", "auto"), paired=True)


def test_modelled_speedup_charges_each_pass_its_curve_cost() -> None:
    from engine.policy import CostCurve
    from engine.types import GenStats

    curve = CostCurve({1: 0.05, 4: 0.1})
    assert benchresult.modelled_speedup([GenStats(emitted_tokens=11, pass_rows={1: 10})] * 2, curve) == 1.0
    # five 4-row passes at 2 steps each that emitted 20 tokens, then 4 plain steps
    assert benchresult.modelled_speedup([GenStats(emitted_tokens=25, pass_rows={4: 5, 1: 4})], curve) == round(24 / 14, 3)
    assert benchresult.modelled_speedup([GenStats(emitted_tokens=1)], curve) == 1.0  # the prefill's token only


def test_the_prompt_lookup_peer_gets_the_modes_sampler_and_each_rounds_seed(tiny_engine, monkeypatch) -> None:
    import engine.peer_backend as pb

    sent: list[dict] = []

    def lookup(peer, prompt, max_tokens, temperature, top_p, top_k=0, min_p=0.0, seed=1234):
        sent.append({"t": temperature, "top_p": top_p, "top_k": top_k, "min_p": min_p, "seed": seed})
        return 4, 0.1, 0.2

    monkeypatch.setattr(pb, "peer_prompt_lookup", lookup)
    wl = Workload("tiny", "edit", (({"role": "user", "content": "a b c"},),), max_tokens=4)
    peer = next(c for c in bench.CONFIGS if c.spec is None)
    rows = [bench.run_config(tiny_engine, wl, "sampled-llama", peer, rnd) for rnd in (0, 1)]
    assert [r.mode for r in rows] == ["sampled-llama"] * 2 and all(r.config == "peer-lookup" for r in rows)
    assert sent == [{"t": 0.6, "top_p": 0.95, "top_k": 40, "min_p": 0.05, "seed": s} for s in (1234, 1235)]
    bench.run_config(tiny_engine, wl, "greedy", peer)
    assert sent[-1]["t"] == 0.0 and sent[-1]["top_k"] == 0
