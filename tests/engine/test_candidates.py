"""The bound on verifying several candidate continuations (engine.lab.candidates)."""

from __future__ import annotations

import json

import pytest

from engine.lab.candidates import any_place_matches, bounds, main
from engine.lab.simulate import ceiling_of


def test_any_place_finds_the_earlier_place_that_continues_longest() -> None:
    # key (5, 6) occurs twice in the prompt: the first place continues 7 8 9, the second 7 0;
    # the output after 5 6 follows the first for three tokens, whichever place came last
    prompt = [5, 6, 7, 8, 9, 1, 5, 6, 7, 0, 2, 5, 6]
    output = [7, 8, 9, 4]
    assert any_place_matches(prompt, output, key=2) == [3, 2, 1, 0]


def test_two_rows_a_token_cost_more_than_one_and_the_ceiling_never_falls_below_plain() -> None:
    curve = {1: 0.04, 2: 0.06, 4: 0.09, 8: 0.15, 16: 0.25, 32: 0.45, 64: 0.8}
    ms = [0] + [20] + [0] * 20 + [0] * 10
    plain, one = ceiling_of(ms, curve, max_len=64)
    _, two = ceiling_of(ms, curve, max_len=64, rows_per_token=2)
    assert one < two <= plain  # a plain pass is always an option
    nothing = ceiling_of([0] * 12, curve)
    assert nothing[0] == pytest.approx(nothing[1]) == pytest.approx(11 * 0.04)  # nothing matched: all plain


def test_the_bound_on_a_copy_is_at_least_the_overlays_ceiling(tmp_path, capsys) -> None:
    body = [(7 * i) % 97 + 3 for i in range(200)]
    curve = {"1": 0.04, "2": 0.06, "4": 0.09, "8": 0.15, "16": 0.25, "32": 0.45, "64": 0.8}
    b = bounds([1, 2] + body + [2, 1], body[:100] + [500, 501] + body[100:], {int(k): v for k, v in curve.items()})
    assert 1.0 < b["overlay"] <= b["any place"]
    assert b["any place, 2 rows"] < b["any place"]
    path = tmp_path / "rec.json"
    path.write_text(json.dumps({"verify_curve": curve, "workloads": {
        "copy": {"kind": "edit", "prompt": [1, 2] + body, "output": body}}}))
    assert main([str(path), "--curve", str(path)]) == 0
    assert "geomean" in capsys.readouterr().out
