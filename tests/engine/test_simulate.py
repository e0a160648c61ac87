"""engine.lab.simulate: the decode loop replayed in virtual time against a recorded output."""

from __future__ import annotations

import pytest

from engine.drafters.ngram import NgramDrafter
from engine.drafters.replay import ReplayDrafter
from engine.lab.simulate import OracleContext, VirtualClock, ceiling, matches, simulate
from engine.policy import CostCurve
from engine.spec import SpecConfig

CURVE = {1: 1.0, 2: 1.4, 3: 1.7, 4: 2.0, 8: 3.0, 16: 3.6, 24: 4.5}
PROMPT = [1, 2, 3, 4, 5, 6]
# an output that copies a block from the prompt and then repeats itself
OUTPUT = [1, 2, 3, 4, 5, 6, 7, 8] + [10 + i % 7 for i in range(40)] + [30, 31, 32] + [10 + i % 7 for i in range(30)]


def test_plain_replay_costs_what_plain_decoding_costs() -> None:
    r = simulate(PROMPT, OUTPUT, CURVE, spec=SpecConfig(drafters=()))
    assert r.speedup == pytest.approx(1.0)
    assert r.plain_s == pytest.approx((len(OUTPUT) - 1) * CURVE[1]) and r.drafted == 0 and r.tau == pytest.approx(1.0)


def test_oracle_context_charges_decode_passes_by_the_curve_and_not_the_prefill() -> None:
    clock = VirtualClock()
    ctx = OracleContext(PROMPT, OUTPUT, 64, CostCurve(dict(CURVE)), clock)
    rows = ctx.decode(PROMPT, 0, all_logits=False)
    assert clock.now == 0.0 and rows.shape == (1, 64) and int(rows[0].argmax()) == OUTPUT[0]
    rows = ctx.decode([OUTPUT[0], OUTPUT[1], 99], len(PROMPT), all_logits=True)
    assert clock.now == pytest.approx(CURVE[3])
    assert [int(r.argmax()) for r in rows] == OUTPUT[1:4]


@pytest.mark.parametrize("mode", ["greedy", "sampled"])
def test_a_drafter_that_is_always_right_pays_and_the_ceiling_bounds_it(mode: str) -> None:
    ref = PROMPT + OUTPUT
    r = simulate(PROMPT, OUTPUT, CURVE, drafter=lambda: ReplayDrafter(ref, [1.0]), mode=mode)
    assert r.speedup > 3.0 and r.accepted == r.drafted > 0
    plain_s, best_s = ceiling(PROMPT, OUTPUT, CURVE, drafter=lambda: ReplayDrafter(ref, [1.0]))
    assert plain_s == pytest.approx(r.plain_s) and plain_s / best_s >= r.speedup - 1e-9


def test_a_drafter_that_is_always_wrong_is_dropped_and_has_no_ceiling() -> None:
    ref = PROMPT + OUTPUT
    r = simulate(PROMPT, OUTPUT, CURVE, drafter=lambda: ReplayDrafter(ref, [0.0], vocab_size=64))
    assert r.accepted == 0
    assert r.speedup > 0.9  # a few failed windows while the policy learns, then plain passes
    plain_s, best_s = ceiling(PROMPT, OUTPUT, CURVE, drafter=lambda: ReplayDrafter(ref, [0.0], vocab_size=64))
    assert best_s == pytest.approx(plain_s)


def test_ngram_policy_stays_under_its_ceiling() -> None:
    r = simulate(PROMPT, OUTPUT, CURVE)
    plain_s, best_s = ceiling(PROMPT, OUTPUT, CURVE)
    assert 1.0 < r.speedup <= plain_s / best_s + 1e-9
    ms = matches(PROMPT, OUTPUT, NgramDrafter(), 24)
    assert len(ms) == len(OUTPUT) and ms[2] == 4  # after "1 2" the prompt proposes "3 4 5 6", which the output copies


def test_empty_output_is_refused() -> None:
    with pytest.raises(ValueError, match="nothing"):
        simulate(PROMPT, [], CURVE)


def test_requests_served_in_a_row_carry_what_the_first_taught_the_policy() -> None:
    from engine.lab.simulate import Served, simulate_served

    # an edit: the reply copies a file from its prompt, with one line changed
    prompt = [1, 2, 3, *range(100, 160), 4, 5]
    output = [*range(100, 130), 7, 8, *range(132, 160), 9]
    alone = [simulate(prompt, output, CURVE, mode=m) for m in ("greedy", "greedy")]
    served = simulate_served([Served(prompt, output), Served(prompt, output), Served(prompt, [])], CURVE)
    assert len(served) == 2 and served[0] == alone[0]  # an empty output is skipped
    assert served[1] != alone[1] and served[1].speedup > alone[1].speedup  # the second starts knowing the copies pay


# -- a long-running engine (engine.lab.serving) -----------------------------------------------

STEP = 0.037  # the 2-core CPU: 27 tok/s plain
CPU_CURVE = {k: v * STEP for k, v in {1: 1, 2: 1.3, 4: 1.7, 8: 2.6, 16: 4.0, 24: 5.0, 32: 5.5, 41: 6.5}.items()}
GPU_CURVE = {k: v * 0.002 for k, v in {1: 1, 2: 1.05, 4: 1.1, 8: 1.3, 16: 1.5, 32: 2.0, 41: 2.4}.items()}
BIG_CURVE = {k: v * 0.011 for k, v in {1: 1, 2: 1.02, 4: 1.05, 8: 1.1, 16: 1.2, 32: 1.5, 41: 1.7}.items()}


def test_the_traffic_is_conversations_that_grow_and_standalone_requests() -> None:
    from engine.lab.serving import traffic

    reqs = traffic(0, rounds=2)
    assert [r.output for r in reqs] == [r.output for r in traffic(0, rounds=2)] and len(reqs) == 12  # seeded
    by_name = {r.name: r for r in reqs}
    call, write = by_name["agent0-r1-call"], by_name["agent0-r1-write"]
    assert write.prompt[: len(call.prompt) + len(call.output)] == call.prompt + call.output  # the tool output follows
    assert {r.mode for r in reqs} == {"greedy", "sampled"} and any(r.name.startswith("new") for r in reqs)


@pytest.mark.parametrize(("curve", "costs", "prefill"), [
    (CPU_CURVE, (0.2 * STEP, 0.0017), 0.004),  # a draft model cheap per token, dear to catch up
    (CPU_CURVE, (0.45 * STEP, 0.0017), 0.004),
    (GPU_CURVE, (0.0012, 0.00005), 0.0001),
])
def test_a_long_running_engine_is_never_slower_than_plain_on_any_request(curve, costs, prefill) -> None:
    # before the catch-up was charged and the guard added, the first case ran two agent calls
    # at 0.36x and 0.74x of plain and five requests below 0.99x: the draft model, probed and
    # trusted on one conversation, caught up with the other one's whole history uncharged
    from engine.lab.serving import DraftCosts, serve, traffic

    res = serve(traffic(0, rounds=3), curve, spec=SpecConfig(), draft=DraftCosts(*costs), prefill_s_per_token=prefill)
    worst = min(res, key=lambda r: r.speedup)
    assert worst.speedup >= 0.99, f"{worst.name} at {worst.speedup:.2f}x of plain"
    assert all(r.speedup > 2.5 for r in res if "write" in r.name or "edit" in r.name)  # the overlay's copies still pay


def test_a_draft_model_that_pays_is_still_used_across_requests() -> None:
    # a big target (11 ms a token) whose draft model is right 70% of the time on new code
    from dataclasses import replace

    from engine.lab.serving import DraftCosts, serve, traffic

    reqs = [replace(r, draft_rate=min(0.95, r.draft_rate + 0.25)) for r in traffic(0, rounds=3)]
    res = serve(reqs, BIG_CURVE, spec=SpecConfig(), draft=DraftCosts(0.0012, 0.00005), prefill_s_per_token=0.0005)
    new = [r for r in res if r.name.startswith("new")]
    assert all(r.drafted.get("draft", 0) > 100 and r.speedup > 1.4 for r in new)
    assert min(r.speedup for r in res) >= 0.99


def test_the_long_run_workload_interleaves_growing_conversations_with_standalone_requests() -> None:
    from engine.lab.benchdata.longrun import long_run, per_request
    from engine.lab.benchdata.workloads import SUITES
    from engine.types import GenStats

    wl = long_run()
    assert SUITES["long"][0].turns == wl.turns and wl.kind == "long" and len(wl.turns) >= 36
    firsts = [t[1]["content"] for t in wl.turns]
    # consecutive requests come from different conversations: their first user message differs
    assert sum(a != b for a, b in zip(firsts, firsts[1:], strict=False)) >= len(firsts) - 4
    tools = [m for t in wl.turns for m in t if m["role"] == "tool"]
    assert any("FAILED" in m["content"] for m in tools) and any("def " in m["content"] for m in tools)
    conv = [t for t in wl.turns if t[1]["content"] == firsts[0]]
    assert all(b[: len(a)] == a for a, b in zip(conv, conv[1:], strict=False))  # each turn extends the last
    slow = GenStats(completion_tokens=10, decode_s=2.0)
    fast = GenStats(completion_tokens=10, decode_s=1.0)
    assert per_request([fast, slow], [slow, slow]) == [0.5, 1.0]


def test_the_bench_reports_the_worst_request_of_a_multi_turn_run() -> None:
    from engine.lab.benchreport import format_table
    from engine.lab.benchresult import RunResult, bracket, speedups

    def run(config: str, per_turn: list[float]) -> RunResult:
        return RunResult("long-run", "sampled", config, 30, 10.0, 10.0, 1.0, [], {}, {}, decode_s=3.0,
                         turn_tok_s=per_turn, turn_lens=[40, 2, 300])

    plain = bracket(run("plain", [10.0, 20.0, 30.0]), run("plain", [10.0, 20.0, 10.0]))
    auto = run("auto", [30.0, 15.0, 40.0])
    speedups([plain, auto])
    assert plain.turn_tok_s == [10.0, 20.0, 20.0] and plain.worst_request is None
    assert auto.worst_request == 0.75  # the second request ran at 15 tok/s where plain ran at 20
    assert auto.worst_timed_request == 2.0  # ...and it was 2 tokens long: of the others, the third is worst
    assert "worst request 0.75x (2.00x of 32+ tokens)" in format_table([plain, auto])


def test_the_worst_request_that_drafted_is_told_apart_from_those_that_drafted_nothing() -> None:
    from engine.lab.benchreport import format_table
    from engine.lab.benchresult import RunResult, speedups

    def run(config: str, per_turn: list[float], drafted: list[int]) -> RunResult:
        return RunResult("long-run", "greedy", config, 30, 10.0, 10.0, 1.0, [], {}, {}, decode_s=3.0,
                         turn_tok_s=per_turn, turn_lens=[40, 50, 300, 2], turn_drafted=drafted)

    plain = run("plain", [10.0, 20.0, 10.0, 10.0], [0, 0, 0, 0])
    auto = run("auto", [9.0, 20.0, 25.0, 5.0], [0, 0, 120, 0])
    speedups([plain, auto])
    assert auto.worst_timed_request == 0.9  # the first request drafted nothing: the same passes as plain
    assert auto.worst_drafted_request == 2.5  # the one that drafted; the 2-token one is not timed
    assert auto.undrafted_mean is not None and abs(auto.undrafted_mean - 0.9 ** 0.5) < 1e-9
    assert "drafting, worst 2.50x; nothing drafted, mean 0.95x" in format_table([plain, auto])


def test_a_replay_that_knows_the_end_token_lets_drafts_run_past_the_reply_and_charges_its_pass() -> None:
    # the reply copies the prompt's first block, which the prompt follows with an end token and more
    prompt = [50, 51] + list(range(10, 40)) + [99] + list(range(60, 90)) + [52]
    output = list(range(10, 40))
    ended = simulate(prompt, output, CURVE, eog=99, max_tokens=200)
    assert ended.plain_s == pytest.approx(len(output) * CURVE[1])  # the end token takes a pass too
    cut = simulate(prompt, output, CURVE)  # windows never reach past the recorded output
    assert cut.plain_s == pytest.approx((len(output) - 1) * CURVE[1])
    assert ended.drafted > 0 and ended.accepted == ended.drafted  # drafts stop at the end token: none missed


def test_a_trace_records_every_pick_beside_what_could_be_copied_without_changing_the_policy() -> None:
    from engine.lab.trace import trace

    # the reply copies a block of the prompt, departs for new tokens, then copies on
    prompt = [50, 51] + list(range(10, 70)) + [52]
    output = list(range(10, 30)) + [200, 201, 202] + list(range(30, 60))
    speedup, picks = trace({"prompt": prompt, "output": output}, CURVE)
    assert speedup == pytest.approx(simulate(prompt, output, CURVE).speedup)
    assert [p.position for p in picks] == sorted({p.position for p in picks})  # one pick a pass, in order
    ms = matches(prompt, output, NgramDrafter(), 64)
    assert all(p.available == ms[p.position] for p in picks)
    assert any(p.window for p in picks) and all(p.window <= 64 for p in picks)
    # every position is a pass's start or inside a window accepted before it
    covered = set()
    for p in picks:
        covered.update(range(p.position, p.position + 1 + min(p.window, p.available)))
    assert covered >= set(range(1, len(output)))


def test_trace_losses_charge_broken_windows_their_unaccepted_rows_and_count_missed_copies() -> None:
    from engine.lab.trace import Pick, losses

    picks = [Pick(1, 3, 6, 1, None),  # 4 rows where 2 were used: 3.0 - 2.0 steps lost
             Pick(3, 0, 24, 10, None),  # a plain step with 10 tokens to copy
             Pick(4, 0, 1, 2, None),  # too little to copy: no miss
             Pick(5, 3, 5, 3, None)]  # accepted whole: nothing lost
    assert losses(picks, {1: 1.0, 2: 2.0, 4: 3.0, 8: 5.0}) == {"broken b6": 1.0, "missed b24": 1.0}
