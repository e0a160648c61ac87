"""The second held-out set (``--suite heldout2``), written after the sixth round of tuning
ended (the side prefill, the shadow's interim credit): a Python edit, a TypeScript edit and new
code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT2_PY = _edit(
    "heldout2-python", "ledger.py", "python",
    "Add a method `close(self, name: str, when: date) -> None` to Ledger that refuses (LedgerError) to close an "
    "account whose balance is not zero, and make `post` reject postings to a closed account or dated before the "
    "account was opened.",
)
HELDOUT2_TS = _edit(
    "heldout2-typescript", "router.ts", "typescript",
    "Add `put` and `delete` helpers like `get` and `post`, and make `handle` answer 405 with an `allow` list when "
    "the path matches a route of another method.",
)
HELDOUT2_NEW = _new(
    "heldout2-new-code",
    "Write a Go package `lru` with a generic `Cache[K comparable, V any]` type: `New(capacity int)`, "
    "`Get(key K) (V, bool)`, `Put(key K, value V)`, `Len() int` and an `OnEvict func(K, V)` hook, "
    "safe for concurrent use, with doc comments. Then write table-driven tests for it.",
)
HELDOUT2 = (HELDOUT2_PY, HELDOUT2_TS, HELDOUT2_NEW)
