"""The eighth held-out set (``--suite heldout8``), written after the twelfth round (the policy's
pooled estimate shrunk towards its prior once) was done: a Python edit, a Go edit and new Python
code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT8_PY = _edit(
    "heldout8-python", "retry.py", "python",
    "Make `Retrier.call` honour a `Retry-After`: when the exception has a numeric `retry_after` attribute, "
    "wait that many seconds (capped by `Backoff.max_s`) instead of the backoff delay; count in `RetryStats` "
    "how many waits came from it (`server_waits`) and show it in `summary`; and add an async "
    "`call_async(fn)` that awaits `fn()` and sleeps with `asyncio.sleep`.",
)
HELDOUT8_GO = _edit(
    "heldout8-go", "lru.go", "go",
    "Add a per-entry time to live: `PutWithTTL(key, value, ttl time.Duration)`, entries that expire are "
    "treated as misses by `Get` and removed (counted in a new `Stats.Expired`), a `Purge()` that drops every "
    "expired entry and returns how many, and an injectable `now func() time.Time` field for tests.",
)
HELDOUT8_NEW = _new(
    "heldout8-new-code",
    "Write a Python module `toposort.py` with `toposort(graph: dict[str, set[str]]) -> list[str]` "
    "(Kahn's algorithm, ties broken alphabetically), a `CycleError` that names one cycle it found, and "
    "`layers(graph)` that groups nodes into levels that can run in parallel, with docstrings, then pytest "
    "tests covering a diamond, a cycle and an empty graph.",
)
HELDOUT8 = (HELDOUT8_PY, HELDOUT8_GO, HELDOUT8_NEW)
