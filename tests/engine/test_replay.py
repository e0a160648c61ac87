"""engine.lab.replay: recorded outputs replayed under the policy and against the ceiling."""

from __future__ import annotations

import json

import pytest

from engine.lab.replay import main, replay


def test_a_copied_output_replays_faster_than_plain_and_never_past_the_ceiling(tmp_path, capsys) -> None:
    body = [(7 * i) % 97 + 3 for i in range(300)]
    curve = {"1": 0.04, "2": 0.06, "4": 0.09, "8": 0.15, "16": 0.25, "32": 0.45, "41": 0.6}
    data = {"verify_curve": curve, "workloads": {
        "copy": {"kind": "edit", "prompt": [1, 2] + body + [2, 1], "output": body},  # the file, re-emitted
        "fresh": {"kind": "new", "prompt": [1, 2, 3], "output": list(range(200, 400))},  # nothing to copy
    }}
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(data))
    res = replay(path)
    copy, fresh = res["workloads"]["copy"], res["workloads"]["fresh"]
    assert 1.2 < copy["speedup"] <= copy["ceiling"] + 1e-9
    assert fresh["ceiling"] == 1.0 and 0.95 <= fresh["speedup"] <= 1.0
    assert res["summary"]["edits_geomean"] == copy["speedup"]
    assert main(["replay", str(path)]) == 0
    assert "| copy |" in capsys.readouterr().out


def test_several_recordings_are_summarized_together_each_under_its_own_curve(tmp_path, capsys) -> None:
    body = [(7 * i) % 97 + 3 for i in range(300)]
    steep = {"1": 0.04, "2": 0.08, "4": 0.16, "8": 0.32, "16": 0.64, "32": 1.28, "41": 1.64}  # rows cost their count
    flat = {"1": 0.04, "2": 0.045, "4": 0.05, "8": 0.055, "16": 0.06, "32": 0.07, "41": 0.08}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"verify_curve": steep, "workloads": {
        "copy-a": {"kind": "edit", "prompt": [1, 2] + body + [2, 1], "output": body}}}))
    b.write_text(json.dumps({"verify_curve": flat, "workloads": {
        "copy-b": {"kind": "edit", "prompt": [1, 2] + body + [2, 1], "output": body},
        "fresh": {"kind": "new", "prompt": [1, 2, 3], "output": list(range(200, 400))}}}))
    res = replay([a, b])
    ws = res["workloads"]
    assert set(ws) == {"copy-a", "copy-b", "fresh"}
    assert ws["copy-b"]["speedup"] > ws["copy-a"]["speedup"]  # the same output, each under its recording's curve
    assert res["summary"]["edits_worst"] == ws["copy-a"]["speedup"]
    assert res["summary"]["new_worst"] == ws["fresh"]["speedup"]
    forced = replay([a, b], curve_from=b)  # one curve for both
    assert forced["workloads"]["copy-a"]["speedup"] == forced["workloads"]["copy-b"]["speedup"]
    assert main(["replay", str(a), str(b)]) == 0
    assert "edits_worst" in capsys.readouterr().out
    with pytest.raises(ValueError, match="copy-b"):  # a workload in two recordings is not counted twice
        replay([b, b])
