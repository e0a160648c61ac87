"""One τ and one stats sum: the TUI's totals, /metrics, tau bench and the JSON stats all show the
value of engine.types.tau (they disagreed: 0.99 against 1.00 for the same plain turn)."""

from __future__ import annotations

from engine.lab.benchresult import merge
from engine.types import DoneEvent, GenStats, tau


def _plain() -> GenStats:  # 99 tokens plus the end-of-generation token, one pass each
    return GenStats(prompt_tokens=10, completion_tokens=99, emitted_tokens=100, verify_passes=100, decode_s=1.0,
                    wall_s=1.2, ceiling_tok_s=200.0)


def _spec() -> GenStats:
    return GenStats(completion_tokens=30, emitted_tokens=31, verify_passes=10, decode_s=0.2, wall_s=0.3,
                    drafted={"ngram": 40}, accepted={"ngram": 21})


def test_every_tau_shown_is_the_one_definition() -> None:
    from app.controller.statsfmt import SessionStats, status_fields
    from app.server.metrics import Metrics

    a, b = _plain(), _spec()
    assert a.tau == tau(100, 100) == 1.0 and b.tau == tau(31, 10)
    total = a + b
    want = tau(131, 110)
    assert total.tau == want and total.to_dict()["tau"] == round(want, 3)

    ss = SessionStats()
    ss.start_turn("first")
    ss.add(a)
    ss.add(b)
    assert ss.turns[0].tau == want and ss.totals().tau == want
    assert f"τ {want:.2f}" in ss.report()
    assert [f.value for f in status_fields(a) if f.key == "tau"] == ["1.00"]

    m = Metrics()
    m.generation("stop", a)
    m.generation("stop", b)
    text = m.render()
    assert f"tau_tau {want:.6g}\n" in text and f"tau_last_tau {b.tau:.6g}\n" in text

    summed, _acc, _ids = merge([DoneEvent("", (), "stop", a), DoneEvent("", (), "stop", b)])
    assert summed.tau == want  # what tau bench reports for a two-turn run


def test_stats_add_up_in_one_place() -> None:
    s = _plain() + _spec()
    assert (s.completion_tokens, s.verify_passes, s.emitted) == (129, 110, 131)
    assert s.decode_tok_s == 129 / 1.2 and s.drafted == {"ngram": 40} and s.accepted == {"ngram": 21}
    assert s.ceiling_tok_s == 200.0  # the latest known ceiling survives a generation that had none


def test_stats_sent_over_the_wire_keep_their_tau() -> None:
    # tau serve sends GenStats.to_dict(); the remote engine (the TUI attached to a server) rebuilds them
    from app.engines.remote_wire import stats_from_dict

    a = _plain()
    back = stats_from_dict(a.to_dict())
    assert back.tau == a.tau == 1.0 and back.emitted == a.emitted
