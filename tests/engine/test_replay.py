"""engine.lab.replay: recorded outputs replayed under the policy and against the ceiling."""

from __future__ import annotations

import json

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
