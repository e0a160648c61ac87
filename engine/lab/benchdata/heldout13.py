"""The thirteenth held-out set (``--suite heldout13``), written after the seventeenth round (a
window in a reply's first 32 tokens must expect to double plain's speed) and before its first
run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never
seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT13_PY = _edit(
    "heldout13-python", "units.py", "python",
    "Add temperature units (C, F, K) whose conversion needs an offset as well as a factor, let `Quantity.parse` "
    "accept thousands separators and a space-free form like `12km`, add a `format(digits=3)` method rounding to "
    "significant digits, and make `UnitError` for an unknown unit list the known units of the closest dimension.",
)
HELDOUT13_TS = _edit(
    "heldout13-typescript", "shortcuts.ts", "typescript",
    "Support chords of two shortcuts separated by a space (\"Ctrl+K Ctrl+S\") that must follow each other within "
    "a timeout given to the `Keymap` constructor, add a \"Mod\" modifier meaning Meta on macOS and Ctrl elsewhere "
    "(the platform passed to the constructor), add `unbind(text, scope)`, and make `bind` throw when the shortcut "
    "is already bound in that scope.",
)
HELDOUT13_NEW = _new(
    "heldout13-new-code",
    "Write a Python module `intervals.py` with an `IntervalSet` class of half-open integer intervals: `add(start, "
    "end)` merging overlapping and adjacent ones, `remove(start, end)` splitting where needed, `__contains__` for a "
    "point, `union`, `intersection` and `difference` with another set, iteration in order and a readable repr, "
    "with docstrings and type hints, then pytest tests for each method.",
)
HELDOUT13 = (HELDOUT13_PY, HELDOUT13_TS, HELDOUT13_NEW)
