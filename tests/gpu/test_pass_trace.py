"""The per-pass trace's accounting: overlapped steps, the steps right after a pass, host time apart."""

from __future__ import annotations

import pytest

from engine.lab.gpu.pass_trace import AFTER, Recorder, instrument, summarize
from engine.policy import CostCurve


def test_summarize_splits_device_host_and_the_steps_after_a_pass() -> None:
    curve = CostCurve({1: 0.002, 64: 0.010})
    events = [
        ("pass", 0.5, -1),  # the prompt: prefill, not decode
        ("pass", 0.002, 1),
        ("pick", 0.001, 0),
        ("pass", 0.011, 64),
        ("verify", 0.003, 0),
        ("pass", 0.004, 1),  # the graph's warm-up after the pass
        ("submit", 0.0001, 1),
        ("pick", 0.0005, 0),
        ("collect", 0.0039, 1),  # overlapped: launch plus wait is the step
        ("pass", 0.002, 1),
    ]
    s = summarize(events, curve, decode_s=0.030)
    assert s["rows"][1]["count"] == 2 and s["rows"][64]["count"] == 1  # the steps before the pass and after the warm-up
    assert s["after_pass_steps"] == {"count": AFTER, "mean_ms": pytest.approx(4.0)}
    assert s["device_s"] == pytest.approx(0.002 + 0.011 + 0.004 + 0.004 + 0.002, abs=1e-4)
    assert s["modelled_device_s"] == pytest.approx(4 * 0.002 + 0.010, abs=1e-4)
    assert s["host_s"] == {"pick": 0.0015, "verify": 0.003}
    assert s["other_s"] == pytest.approx(0.030 - s["device_s"] - 0.0045, abs=1e-4)


def test_a_prompt_of_any_length_is_prefill() -> None:
    class Ctx:
        def decode(self, toks, pos, *, all_logits):
            return None

    class Eng:
        class target:
            ctx = Ctx()

        class speculator:
            @staticmethod
            def pick(*a):
                return None

    import engine.decoder as dec

    keep = dec.verify
    rec = Recorder()
    try:
        instrument(Eng(), rec)  # type: ignore[arg-type]
        Eng.target.ctx.decode([1] * 141, 0, all_logits=False)  # a short prompt
        Eng.target.ctx.decode([1], 141, all_logits=True)  # a step
        Eng.target.ctx.decode([1] * 16, 142, all_logits=True)  # a verify pass
    finally:
        dec.verify = keep
    assert [r for _, _, r in rec.events] == [-1, 1, 16]


def test_nested_calls_count_once() -> None:
    rec = Recorder()
    inner = rec.wrap("verify", lambda: 1)
    outer = rec.wrap("pick", lambda: inner() + 1)
    assert outer() == 2
    assert [e[0] for e in rec.events] == ["pick"]
