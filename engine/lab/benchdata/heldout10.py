"""The tenth held-out set (``--suite heldout10``), written after the fourteenth round (a long
match of the reply's own text learns apart from a file's copies) and before its first run: a
Python edit, a Go edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT10_PY = _edit(
    "heldout10-python", "semver.py", "python",
    "Give `Version` a `bump(part: str) -> Version` method ('major', 'minor' or 'patch'; anything else raises "
    "VersionError) that drops the prerelease and build, compare prereleases the way the semver spec does "
    "(dot-separated identifiers, numeric ones numerically and below alphanumeric ones), and let `Range` "
    "accept alternatives separated by `||`.",
)
HELDOUT10_GO = _edit(
    "heldout10-go", "bitset.go", "go",
    "Add `Union(other *BitSet) *BitSet`, `Intersect(other *BitSet) *BitSet` and `Difference(other *BitSet) "
    "*BitSet` returning new sets, an `Equal(other *BitSet) bool` that ignores trailing zero words, and make "
    "`String` print runs of three or more consecutive members as ranges, like {1 2 5-9}.",
)
HELDOUT10_NEW = _new(
    "heldout10-new-code",
    "Write a Python module `topo.py` with `topological_order(graph: dict[str, list[str]]) -> list[str]` "
    "(edges point from a node to what it depends on; dependencies come first, ties broken alphabetically), "
    "a `CycleError` carrying the cycle's path, and `layers(graph) -> list[list[str]]` grouping nodes that "
    "can be built together, with docstrings, then pytest tests for ordering, cycles and layers.",
)
HELDOUT10 = (HELDOUT10_PY, HELDOUT10_GO, HELDOUT10_NEW)
