"""tau bench's llama-server column: the server runner against a stand-in llama-server (an HTTP
script that answers /health and /completion the way llama-server does), and the ratios."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from engine.lab.benchdata.workloads import Workload
from engine.lab.benchpeer import attach_peers, run_llama_server
from engine.lab.benchreport import format_peer_table, format_table, peer_rows, summary
from engine.lab.benchresult import RunResult
from engine.lab.peer_server import PROBE_PROMPT, find_server
from engine.peer_backend import PeerSettings

FAKE = '''#!{python}
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
args = sys.argv[1:]
port = int(args[args.index("--port") + 1])
spec = "--spec-type" in args
with open({log!r}, "a") as f:
    f.write(json.dumps(args) + "\\n")
with open({log!r} + ".env", "a") as f:
    f.write(os.environ.get("GGML_CUDA_GRAPH_KEY_BY_ROWS", "-") + "\\n")
class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def _send(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        self._send({{"status": "ok"}})
    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if {crash_repack} and "--no-repack" not in args:
            os._exit(132)  # as llama.cpp's AMX kernels die of SIGILL on the first batched pass in some VMs
        with open({log!r}, "a") as f:
            f.write(json.dumps(req) + "\\n")
        n = req["n_predict"]
        ms = 10.0 * n / (2 if spec else 1)
        toks = {{"tokens": list(range(n))}} if req.get("return_tokens") else {{}}
        self._send({{"content": "x" * n, **toks, "timings": {{"predicted_n": n, "predicted_ms": ms, "prompt_ms": 5.0,
                    "draft_n": n if spec else 0, "draft_n_accepted": n // 2 if spec else 0}}}})
HTTPServer(("127.0.0.1", port), H).serve_forever()
'''


class StubEngine:
    def __init__(self, model: str) -> None:
        self.peer_settings = PeerSettings(model, 512, 64, 1, 0, False, None)

    def chat_prompt(self, messages, tools=None, add_generation_prompt=True) -> str:
        return "".join(m["content"] for m in messages) + "|"


def _fake_server(tmp_path: Path, crash_repack: bool = False) -> tuple[Path, Path]:
    log = tmp_path / "calls.jsonl"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "llama-server"
    exe.write_text(FAKE.format(python=sys.executable, log=str(log), crash_repack=crash_repack))
    exe.chmod(0o755)
    return bin_dir, log


def test_find_server_takes_the_binary_or_its_bin_dir(tmp_path) -> None:
    bin_dir, _ = _fake_server(tmp_path)
    assert find_server(str(bin_dir)) == bin_dir / "llama-server" == find_server(str(bin_dir / "llama-server"))
    with pytest.raises(ValueError, match="no executable llama-server"):
        find_server(str(tmp_path))


def test_every_configuration_gets_every_workload_with_taus_sampling_settings(tmp_path) -> None:
    bin_dir, log = _fake_server(tmp_path)
    wl = Workload("w", "edit", (({"role": "user", "content": "a"},), ({"role": "user", "content": "b"},)), 8)
    peers = run_llama_server(StubEngine(str(tmp_path / "m.gguf")), bin_dir / "llama-server", [wl],
                             ("greedy", "sampled"))
    assert sorted({r.config for r in peers}) == ["llama-ngram-map-k4v", "llama-ngram-mod", "llama-plain"]
    assert all(r.tokens == 16 and r.decode_tok_s > 0 for r in peers)  # two turns of 8 tokens each
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    probe, *starts = [x for x in lines if isinstance(x, list)]
    probed, *reqs = [x for x in lines if isinstance(x, dict)]
    assert probed["prompt"] == PROBE_PROMPT and "--no-repack" not in probe  # the default layout answered
    assert len(starts) == 6 and all(s[s.index("-t") + 1] == "1" and s[s.index("-c") + 1] == "512" for s in starts)
    assert ["--spec-type", "ngram-mod"] == [a for a in starts[2] if a in ("--spec-type", "ngram-mod")]
    # a fresh server for each mode: ngram-mod's table would carry the greedy reply into the sampled request
    served: list[set] = []
    for x in lines[2:]:
        if isinstance(x, list):
            served.append(set())
        else:
            served[-1].add(x["temperature"])
    assert served == [{0.0}] * 3 + [{0.6}] * 3
    assert not any("--no-repack" in s for s in starts)
    assert [r["prompt"] for r in reqs[:2]] == ["a|", "b|"]
    assert {(r["temperature"], r["top_p"]) for r in reqs} == {(0.0, 1.0), (0.6, 0.95)}
    # the rest is llama-server's own defaults, as ../shared/peers/llama_server_bench.py sends: top_k 0 and
    # min_p 0 had it sort the whole vocabulary on the host every token (2.2 -> 4.4 ms a token on an H100)
    assert not any({"top_k", "min_p", "repeat_penalty"} & r.keys() for r in reqs)


def test_the_peer_runs_without_taus_own_llama_cpp_switches(tmp_path, monkeypatch) -> None:
    bin_dir, log = _fake_server(tmp_path)
    monkeypatch.setenv("GGML_CUDA_GRAPH_KEY_BY_ROWS", "1")  # tau's patched CUDA graphs: not the vendored llama.cpp
    wl = Workload("w", "edit", (({"role": "user", "content": "a"},),), 8)
    run_llama_server(StubEngine(str(tmp_path / "m.gguf")), bin_dir / "llama-server", [wl], ("greedy",))
    seen = Path(str(log) + ".env").read_text().split()
    assert len(seen) == 4 and set(seen) == {"-"}  # the probe and the three configurations


def test_a_peer_whose_repacked_weights_crash_runs_every_configuration_without_them(tmp_path) -> None:
    bin_dir, log = _fake_server(tmp_path, crash_repack=True)
    wl = Workload("w", "edit", (({"role": "user", "content": "a"},),), 8)
    peers = run_llama_server(StubEngine(str(tmp_path / "m.gguf")), bin_dir / "llama-server", [wl], ("greedy",))
    assert len(peers) == 3 and all(r.tokens == 8 and r.decode_tok_s > 0 for r in peers)
    probe, *starts = [json.loads(x) for x in log.read_text().splitlines() if x.startswith("[")]
    assert "--no-repack" not in probe and len(starts) == 3 and all("--no-repack" in s for s in starts)
    assert "ran with --no-repack" in format_peer_table(attach_peers([], peers))


def _r(config: str, mode: str, tok_s: float) -> RunResult:
    return RunResult("w", mode, config, 100, tok_s, tok_s, 1.0, [], {}, {})


def test_ratios_against_llama_server_plain_and_taus_plain() -> None:
    tau_rows = [_r("plain", "greedy", 30.0), _r("auto", "greedy", 60.0)]
    peers = [_r("llama-plain", "greedy", 40.0), _r("llama-ngram-mod", "greedy", 50.0),
             _r("llama-ngram-map-k4v", "greedy", 45.0)]
    out = attach_peers(tau_rows, peers)
    by = {r.config: r for r in out}
    assert by["auto"].speedup == 2.0 and by["auto"].vs_peer_plain == 1.5
    assert by["llama-ngram-mod"].speedup == pytest.approx(50 / 30) and by["plain"].vs_peer_plain == 0.75
    (row,) = peer_rows(out)
    assert row["llama_best_config"] == "llama-ngram-mod" and row["tau_auto_vs_llama_best"] == 1.2
    assert row["tau_plain_vs_llama_plain"] == 0.75 and row["tau_auto_vs_llama_plain"] == 1.5
    table = format_peer_table(out)
    assert "50.0 (llama-ngram-mod)" in table and "1.20x" in table


def test_beside_llama_server_each_workload_and_mode_runs_on_both_sides_in_mirrored_order(tmp_path, monkeypatch) -> None:
    # run as two blocks, tau's half-hour then llama-server's, a machine that sped up in between
    # read every llama-server row faster than tau's; one side always first favours it on a drifting one
    import engine.lab.benchpeer as bp

    bin_dir, log = _fake_server(tmp_path)
    one = Workload("one", "edit", (({"role": "user", "content": "a"},),), 4)
    two = Workload("two", "edit", (({"role": "user", "content": "b"},),), 4)
    monkeypatch.setattr(bp, "SUITES", {"pair": (one, two)})

    def tau_side(engine, suite, modes, configs, progress=None, rounds=1, paired=False, workloads=None):
        (wl,) = workloads
        with open(log, "a") as f:
            f.write(json.dumps({"tau": wl.name, "modes": list(modes)}) + "\n")
        return [RunResult(wl.name, m, "plain", 4, 10.0, 10.0, 1.0, [], {}, {}) for m in modes]

    monkeypatch.setattr(bp, "run_bench", tau_side)
    out = bp.run_beside_llama_server(StubEngine(str(tmp_path / "m.gguf")), bin_dir / "llama-server", "pair",
                                     ("greedy", "sampled"), ("plain",))
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    order = [f"tau {x['tau']} {x['modes'][0]}" if "tau" in x
             else f"llama {x['prompt']} {'greedy' if x['temperature'] == 0 else 'sampled'}"
             for x in lines if isinstance(x, dict) and x.get("prompt") != PROBE_PROMPT]
    assert order == ["tau one greedy", *["llama a| greedy"] * 3, *["llama a| sampled"] * 3, "tau one sampled",
                     "tau two greedy", *["llama b| greedy"] * 3, *["llama b| sampled"] * 3, "tau two sampled"]
    # llama-server's plain stands next to tau's block in both modes: first after it, last before it
    starts = [x for x in lines if isinstance(x, list)][1:]  # after the layout probe
    kinds = ["plain" if "--spec-type" not in s else s[s.index("--spec-type") + 1] for s in starts]
    assert kinds == ["plain", "ngram-map-k4v", "ngram-mod", "ngram-mod", "ngram-map-k4v", "plain"] * 2
    peer_plain = [r for r in out if r.config == "llama-plain"]
    assert [(r.workload, r.mode) for r in peer_plain] == [("one", "greedy"), ("one", "sampled"),
                                                          ("two", "greedy"), ("two", "sampled")]
    assert all(r.vs_peer_plain == 1.0 for r in peer_plain)
    assert all(r.vs_peer_plain == pytest.approx(10.0 / (4 / 0.04)) for r in out if r.config == "plain")


def test_the_same_distribution_mode_sends_llama_servers_chain_to_it(tmp_path) -> None:
    # sampled-llama: tau samples llama.cpp's chain with its defaults, and the server is told them explicitly
    from engine.lab.bench import MODES

    bin_dir, log = _fake_server(tmp_path)
    wl = Workload("w", "edit", (({"role": "user", "content": "a"},),), 8)
    run_llama_server(StubEngine(str(tmp_path / "m.gguf")), bin_dir / "llama-server", [wl], ("sampled-llama",))
    reqs = [x for x in map(json.loads, log.read_text().splitlines()) if isinstance(x, dict)][1:]
    assert len(reqs) == 3
    assert {(r["temperature"], r["top_p"], r["top_k"], r["min_p"]) for r in reqs} == {(0.6, 0.95, 40, 0.05)}
    p = MODES["sampled-llama"]
    assert p.temper_last and (p.top_k, p.min_p) == (40, 0.05)


def test_greedy_llama_server_replies_are_set_beside_tau_plains(tmp_path) -> None:
    # two builds of one model part at a near-tie, and from there the two sides time different text
    bin_dir, log = _fake_server(tmp_path)  # its replies are tokens 0..n-1
    wl = Workload("w", "edit", (({"role": "user", "content": "a"},), ({"role": "user", "content": "b"},)), 4)
    peers = run_llama_server(StubEngine(str(tmp_path / "m.gguf")), bin_dir / "llama-server", [wl], ("greedy", "sampled"))
    assert all(r.token_ids == [0, 1, 2, 3] * 2 and r.turn_lens == [4, 4] for r in peers)
    assert all(x["return_tokens"] for x in map(json.loads, log.read_text().splitlines()) if isinstance(x, dict))

    def tau(mode: str, ids: list[int]) -> RunResult:
        return RunResult("w", mode, "plain", 8, 10.0, 10.0, 1.0, [], {}, {}, token_ids=ids)

    out = attach_peers([tau("greedy", [0, 1, 2, 3, 0, 1, 9, 3]), tau("sampled", [7] * 8)], peers)
    greedy = [r for r in out if r.config.startswith("llama-") and r.mode == "greedy"]
    assert len(greedy) == 3 and all(r.first_divergence == 6 and r.same_as_plain is False for r in greedy)
    assert all(r.same_as_plain is None for r in out if r.mode == "sampled")  # sampled replies differ by their seeds
    row = next(r for r in peer_rows(out) if r["mode"] == "greedy")
    assert row["llama_plain_parts_at"] == 6 and row["llama_best_same_reply"] is False
    assert "parts at 6 / parts at 6" in format_peer_table(out)
    assert "parts from tau plain@6" in format_table(out)
    same = attach_peers([tau("greedy", [0, 1, 2, 3] * 2)], [r for r in peers if r.mode == "greedy"])
    assert all(r.same_as_plain for r in same if r.config.startswith("llama-"))
    assert "same as tau's / same as tau's" in format_peer_table(same) and "=tau plain" in format_table(same)
    assert summary(same)["greedy_runs_compared"] == 0  # the greedy-equivalence count stays tau's own
