"""The twenty-first held-out set (``--suite heldout21``), written after the twenty-third round and
before its first run, with no policy change since the twentieth: a Python edit, a TypeScript edit
and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT21_PY = _edit(
    "heldout21-python", "shipping.py", "python",
    "Add a free-shipping threshold to `RateTable` (`free_over_kg: float | None`, the price is 0 at or above it), "
    "make `Zone.covers` prefer the longest matching prefix by adding `Zone.match_length(postal_code)` and using "
    "it in `zone_for`, round the billable weight up to 0.1 kg instead of half kilograms, and make "
    "`load_calculator` raise `QuoteError` naming the missing key when a zone or rate entry is incomplete.",
)
HELDOUT21_TS = _edit(
    "heldout21-typescript", "autocomplete.ts", "typescript",
    "Ignore responses to stale queries (a fetch that resolves after a newer one started), show a "
    "\"No matches\" item when the fetch returns nothing, let Escape close the list and Tab select the active "
    "item, and add a `destroy()` that clears the timer and removes the list and every listener it added.",
)
HELDOUT21_NEW = _new(
    "heldout21-new-code",
    "Write a Python module `skiplist.py` with a `SkipList` sorted map (keys comparable, values any) using "
    "random levels with p = 0.5 and a maximum of 16 levels, with `insert`, `get`, `remove`, `__len__`, "
    "`__contains__` and `items(lo=None, hi=None)` iterating keys in order within a range, with docstrings "
    "and type hints, then pytest tests including a comparison against a sorted dict.",
)
HELDOUT21 = (HELDOUT21_PY, HELDOUT21_TS, HELDOUT21_NEW)
