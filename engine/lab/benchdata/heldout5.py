"""The fifth held-out set (``--suite heldout5``), written after the ninth round (verify passes
padded to fixed widths on a GPU, the greedy near-tie check) was done: a Python edit, a Java edit
and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT5_PY = _edit(
    "heldout5-python", "ttlcache.py", "python",
    "Add an optional `on_evict: Callable[[K, V, str], None]` constructor argument called with the key, the value "
    "and the reason (`\"expired\"`, `\"evicted\"` or `\"deleted\"`) whenever an entry leaves the cache except "
    "through `clear`, and make `get_or_compute` cache a computed `None` too (use a private sentinel).",
)
HELDOUT5_JAVA = _edit(
    "heldout5-java", "Inventory.java", "java",
    "Add `adjust(String sku, int delta, String reason)` for stock counts (never below the reserved quantity, "
    "else IllegalStateException) that records an `Adjustment(sku, delta, reason)` record in a history list, "
    "and `history(String sku)` returning that SKU's adjustments oldest first as an unmodifiable list.",
)
HELDOUT5_NEW = _new(
    "heldout5-new-code",
    "Write a Python module `intervals.py` with a class `IntervalSet` of half-open integer intervals that merges "
    "overlapping and adjacent ones: `add(start, end)`, `remove(start, end)` (splitting intervals as needed), "
    "`__contains__(point)`, `__iter__` in order, `total_length()`, with docstrings, then pytest tests for it.",
)
HELDOUT5 = (HELDOUT5_PY, HELDOUT5_JAVA, HELDOUT5_NEW)
