"""Load test on loopback: 20 concurrent clients, FIFO, none lost, disconnects free the engine,
memory flat. Run with -s to see the numbers (also: python -m app.server.loadtest)."""

from __future__ import annotations

from app.server.loadtest import run_loadtest


def test_twenty_concurrent_clients():
    res = run_loadtest(clients=20, rounds=4)
    print("\n" + res.summary())
    assert res.requests == 100 and res.answered == 100 and res.lost == 0 and res.wrong == 0
    assert res.fifo_ok, res.served_order  # served and finished in arrival order
    assert res.served_order == list(range(20))
    # a dropped long generation (minutes of scripted tokens) frees the engine at once
    assert res.cancel_stream_free_s < 1.0 and res.cancel_plain_free_s < 1.0
    assert not res.queued_drop_reached_engine
    # memory flat: the Python heap after round 1 vs after round 4 of 20 clients each
    assert res.heap_growth_kb < 256, res.heap_per_round_kb
    assert res.rss_after_kb - res.rss_before_kb < 32 * 1024
