"""tau bench --plain-duel: tau plain and llama-server plain taking turns against one stand-in llama-server
(the HTTP script of test_bench_peer), the order flipped every pair, and the pair ratios."""

from __future__ import annotations

import json

import pytest

import engine.lab.plainduel as pd
from engine.lab.benchdata.workloads import Workload
from engine.lab.benchresult import RunResult
from engine.lab.peer_server import PROBE_PROMPT
from tests.engine.test_bench_peer import StubEngine, _fake_server


def _tau_side(log, speeds):
    """tau's plain runs, logged into the server's call log so both sides' order shows in one file."""
    calls = iter(speeds)

    def run(engine, wl, mode, cfg, rnd=0):
        assert cfg.name == "plain"
        with open(log, "a") as f:
            f.write(json.dumps({"tau": wl.name, "mode": mode, "rnd": rnd, "max_tokens": wl.max_tokens}) + "\n")
        n = wl.max_tokens
        return RunResult(wl.name, mode, "plain", n, 0.0, 0.0, 1.0, [], {}, {}, decode_s=n / next(calls))

    return run


def test_the_sides_take_turns_on_one_server_with_the_order_flipped_every_pair(tmp_path, monkeypatch) -> None:
    bin_dir, log = _fake_server(tmp_path)  # the stand-in decodes at 100 tok/s
    # warm-up 10 tok/s (not counted), then pairs at 98, 120, 90 and 100 tok/s
    monkeypatch.setattr(pd, "run_config", _tau_side(log, [10.0, 98.0, 120.0, 90.0, 100.0]))
    wl = Workload("w", "edit", (({"role": "user", "content": "a"},),), 700)
    (duel,) = pd.plain_duel(StubEngine(str(tmp_path / "m.gguf")), bin_dir / "llama-server", [wl], ("sampled",),
                            pairs=4, max_tokens=50)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    starts = [x for x in lines if isinstance(x, list)][1:]  # after the layout probe
    assert len(starts) == 1 and "--spec-type" not in starts[0]  # one plain server for the whole duel
    calls = [x for x in lines if isinstance(x, dict) and x.get("prompt") != PROBE_PROMPT]
    order = ["tau" if "tau" in x else "llama" for x in calls]
    assert order == ["tau", "llama"] + ["tau", "llama", "llama", "tau", "tau", "llama", "llama", "tau"]
    # both sides capped at the same budget, and pair i samples with round i's seed on both sides
    assert {x["max_tokens"] for x in calls if "tau" in x} == {50} == {x["n_predict"] for x in calls if "prompt" in x}
    assert [x["rnd"] for x in calls if "tau" in x] == [0, 0, 1, 2, 3]
    assert [x["seed"] for x in calls if "prompt" in x] == [1234, 1234, 1235, 1236, 1237]
    assert [p.tau_first for p in duel.pairs] == [True, False, True, False]
    assert [p.ratio for p in duel.pairs] == pytest.approx([0.98, 1.2, 0.9, 1.0])
    assert duel.at_least() == 3 and duel.median == pytest.approx(0.99)
    assert duel.pooled == pytest.approx((200 / sum(50 / s for s in (98, 120, 90, 100))) / 100)
    row = pd.format_duels([duel]).splitlines()[2]
    assert "| 4 |" in row and "0.90-1.20x" in row and "3 of 4" in row


def test_a_duel_without_pairs_is_refused(tmp_path) -> None:
    bin_dir, _ = _fake_server(tmp_path)
    with pytest.raises(ValueError, match="at least one pair"):
        pd.plain_duel(StubEngine(str(tmp_path / "m.gguf")), bin_dir / "llama-server", [], ("greedy",), pairs=0)


@pytest.mark.parametrize("argv, word", [
    (["--plain-duel", "4"], "--peer-server"),
    (["--plain-duel", "4", "--peer-server", "BIN", "--configs", "plain,auto"], "--configs"),
    (["--plain-duel", "-1", "--peer-server", "BIN"], "positive"),
])
def test_cli_refuses_a_duel_it_cannot_run_in_one_line(argv, word, tmp_path, capsys) -> None:
    from app.cli.main import main

    bin_dir, _ = _fake_server(tmp_path)
    argv = [str(bin_dir) if a == "BIN" else a for a in argv]
    assert main(["bench", "--suite", "new", *argv]) != 0
    err = capsys.readouterr().err
    assert word in err and len(err.strip().splitlines()) == 1


def _duel(*ratios: float) -> pd.Duel:
    return pd.Duel("w", "greedy", 100, tuple(pd.DuelPair(100, 1.0, 100, r, i % 2 == 0) for i, r in enumerate(ratios)))


def test_the_overall_figure_is_the_pairs_geometric_mean_with_a_bootstrap_interval() -> None:
    o = pd.overall([_duel(0.8, 1.25), _duel(1.0, 1.0)])
    assert o.pairs == 4 and o.geomean == pytest.approx(1.0) and o.at_least == 3
    assert o.low < 1.0 < o.high and o.low >= 0.8 and o.high <= 1.25
    same = pd.overall([_duel(0.97, 0.97, 0.97)])
    assert (same.low, same.geomean, same.high) == pytest.approx((0.97, 0.97, 0.97)) and same.at_least == 0
    assert "all 3 pairs: geometric mean 0.970x" in pd.format_duels([_duel(0.97, 0.97, 0.97)])


def test_saved_duels_pool_across_files_into_one_figure_and_one_per_family(tmp_path, capsys) -> None:
    a = {"duels": [{**_duel(0.9, 1.0).to_json(), "workload": "heldout42-new-code"}]}
    b = {"duels": [{**_duel(1.1, 1.1).to_json(), "workload": "heldout44-new-code"},
                   {**_duel(0.5).to_json(), "workload": "heldout44-python"}]}
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    duels = pd.load_duels([tmp_path / "a.json", tmp_path / "b.json"])
    assert [len(d.pairs) for d in duels] == [2, 2, 1]
    assert [p.ratio for p in duels[0].pairs] == pytest.approx([0.9, 1.0], rel=1e-3)
    assert pd.main([str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    geo_new = (0.9 * 1.0 * 1.1 * 1.1) ** 0.25  # both sets' new code in one row
    assert f"| new-code | greedy | 4 | {geo_new:.3f}x |" in out
    assert "| python | greedy | 1 | 0.500x |" in out
    assert f"| all | | 5 | {(0.9 * 1.0 * 1.1 * 1.1 * 0.5) ** 0.2:.3f}x |" in out


def test_pooling_a_file_that_is_not_a_saved_duel_is_one_line(tmp_path, capsys) -> None:
    (tmp_path / "bench.json").write_text(json.dumps({"results": []}))
    assert pd.main([str(tmp_path / "bench.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "bench.json: not a saved plain duel" in err and "\n" not in err
