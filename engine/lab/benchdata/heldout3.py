"""The third held-out set (``--suite heldout3``), written after the seventh round of tuning
ended (wide verify passes on the other CPU weight layout): a Python edit, a JavaScript edit and
new code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT3_PY = _edit(
    "heldout3-python", "todo.py", "python",
    "Give items an optional due date (`due: str | None`, ISO `YYYY-MM-DD`, checked with `date.fromisoformat`), "
    "add a `--due` option to `add`, and make `ls` list pending items by priority (high first), then by due date.",
)
HELDOUT3_JS = _edit(
    "heldout3-javascript", "validate.js", "javascript",
    "Support `enum` (the value must equal one of the listed values), and `minLength`, `maxLength` and `pattern` "
    "(a regular expression source string) for strings, reporting problems in the same style as the others.",
)
HELDOUT3_NEW = _new(
    "heldout3-new-code",
    "Write a Python module `intervals.py` with a class `IntervalSet` of half-open integer intervals: `add(start, "
    "end)` merges overlapping and touching intervals, `remove(start, end)` splits them, `__contains__(x)`, "
    "`__iter__` yields (start, end) pairs in order, and `total()` returns the covered length. Use bisect, add "
    "docstrings, then write pytest tests for it.",
)
HELDOUT3 = (HELDOUT3_PY, HELDOUT3_JS, HELDOUT3_NEW)
