"""The eighteenth held-out set (``--suite heldout18``), written after the twenty-second round (a long
copy stays the n-gram overlay's home while a short one holds its anchor) and before its first run: a
Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT18_PY = _edit(
    "heldout18-python", "sessionstore.py", "python",
    "Add a `max_sessions` limit that evicts the least recently touched session when a new one would exceed it, "
    "an absolute `max_age` after which a session expires however recently it was touched, a `rotate(sid)` that "
    "moves a session's values to a fresh id and destroys the old one, and count evictions and expirations in a "
    "`stats()` method.",
)
HELDOUT18_TS = _edit(
    "heldout18-typescript", "taskqueue.ts", "typescript",
    "Give `add` an optional `priority` (higher runs first, ties in insertion order), add `pause()` and `resume()`, "
    "a per-task `timeoutMs` option that rejects with a `TimeoutError` class, and an `onIdle()` method returning "
    "a promise that resolves once nothing is waiting or running.",
)
HELDOUT18_NEW = _new(
    "heldout18-new-code",
    "Write a Python module `intervaltree.py` with a centered interval tree over half-open integer intervals that "
    "supports insert, remove, `overlapping(start, end)` and `containing(point)` queries, keeps each interval's "
    "attached payload, and rebuilds itself when it grows unbalanced, with docstrings and type hints, then pytest "
    "tests covering empty trees, touching endpoints and duplicates.",
)
HELDOUT18 = (HELDOUT18_PY, HELDOUT18_TS, HELDOUT18_NEW)
