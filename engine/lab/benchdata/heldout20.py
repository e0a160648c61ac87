"""The twentieth held-out set (``--suite heldout20``), written after the twenty-third round's change
(a place the index finds where a resync would have looked is the copy resuming; a far resync keeps
the place it left as home) and before its first run: a Python edit, a TypeScript edit and new
Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT20_PY = _edit(
    "heldout20-python", "gradebook.py", "python",
    "Let a category cap its percent at a `max_percent` (extra credit beyond it is ignored), let scores be "
    "excused (an `excused` flag that leaves them out of every average), make `load_scores` skip blank rows and "
    "report the line number in its error, and add `Gradebook.report(student)` returning each category's "
    "percent with the final percent and letter.",
)
HELDOUT20_TS = _edit(
    "heldout20-typescript", "dragsort.ts", "typescript",
    "Support touch input (touchstart/touchmove/touchend, using the first touch), let Escape cancel a drag and "
    "put the item back where it started, call `onReorder` only when the order actually changed, and add a "
    "`destroy()` that removes every listener the constructor added.",
)
HELDOUT20_NEW = _new(
    "heldout20-new-code",
    "Write a Python module `bloom.py` with a `BloomFilter` class sized from an expected item count and a "
    "target false-positive rate (computing the bit count and number of hashes), using double hashing over "
    "`hashlib.blake2b`, with `add`, `__contains__`, `union` of two compatible filters and an estimated item "
    "count, with docstrings and type hints, then pytest tests for sizing, membership and union.",
)
HELDOUT20 = (HELDOUT20_PY, HELDOUT20_TS, HELDOUT20_NEW)
