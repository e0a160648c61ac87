"""The twenty-seventh held-out set (``--suite heldout27``), written in the twenty-eighth round after its
changes (AMX rebuilt, the calibration choosing by a representative request) and before its first run:
a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT27_PY = _edit(
    "heldout27-python", "expenses.py", "python",
    "Reject a non-positive amount and unknown names in `among` in `spend`, let `spend` take explicit `weights` "
    "per person instead of equal shares, round every share to cents with the remainder going to the payer, add "
    "`remove_member(name)` that refuses while the member's balance is not zero, and make `export_csv` write "
    "each expense's shares as a `name:amount` list column.",
)
HELDOUT27_TS = _edit(
    "heldout27-typescript", "notifybell.ts", "typescript",
    "Escape the notice text before putting it in the HTML, keep at most `max` notices (a constructor option, "
    "default 50) dropping the oldest read ones first, close the list on Escape and on a click outside, add a "
    "`dismiss(id)` with a close button on each item, and refresh the relative times every minute while open.",
)
HELDOUT27_NEW = _new(
    "heldout27-new-code",
    "Write a Python module `rangeset.py` with a `RangeSet` class holding disjoint half-open integer ranges: "
    "`add(start, end)` merging overlaps and neighbours, `remove(start, end)` splitting ranges, `__contains__`, "
    "`__iter__` over the ranges in order, `union`, `intersection` and `difference` with another set, and "
    "`__len__` as the count of integers covered, with docstrings and type hints, then pytest tests.",
)
HELDOUT27 = (HELDOUT27_PY, HELDOUT27_TS, HELDOUT27_NEW)
