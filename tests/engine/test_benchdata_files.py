"""Each held-out set's sources stay as its first run saw them: no two edit workloads share a stored file."""

from __future__ import annotations

from collections import Counter

from engine.lab.benchdata.workloads import SUITES, source


def _user(wl) -> str:
    return next(m["content"] for turn in wl.turns for m in turn if m["role"] == "user")


def _file(wl) -> str:
    """The file an edit workload shows, between its fence lines."""
    body = _user(wl).split("```", 2)[1]
    return body.split("\n", 1)[1]


def test_edit_workloads_of_different_sets_show_different_sources() -> None:
    seen: dict[str, str] = {}
    for suite, wls in SUITES.items():
        if not suite.startswith("heldout"):
            continue
        for wl in wls:
            if wl.kind == "edit":
                seen.setdefault(wl.name, _file(wl))
    texts = Counter(seen.values())
    assert all(n == 1 for n in texts.values())


def test_the_twenty_third_and_twenty_ninth_stepper_files_differ() -> None:
    by_name = {wl.name: _user(wl) for wl in SUITES["heldout23"] + SUITES["heldout29"]}
    assert source("stepper.ts") in by_name["heldout23-typescript"]
    assert source("stepper29.ts") in by_name["heldout29-typescript"]
    assert source("stepper.ts") != source("stepper29.ts")
