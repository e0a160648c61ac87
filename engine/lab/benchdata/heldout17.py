"""The seventeenth held-out set (``--suite heldout17``), written after the twenty-first round (prompts
computed while the user types; the decode path unchanged since the twentieth) and before its first
run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never
seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT17_PY = _edit(
    "heldout17-python", "webhooks.py", "python",
    "Make the retry delay jittered (a random 0-25% added) and capped at `max_delay`, stop retrying on 4xx "
    "statuses other than 408 and 429, add a `replay(since)` that redelivers every failed attempt after that "
    "time, and give each delivery a UUID sent as `X-Delivery-Id` and recorded on its attempts.",
)
HELDOUT17_TS = _edit(
    "heldout17-typescript", "paginator.ts", "typescript",
    "Add an optional `maxAgeMs` after which cached pages are fetched again, retry a failed page request up to "
    "`retries` times with exponential backoff on 5xx and network errors, support an `AbortSignal` in the options "
    "that cancels in-flight requests, and add an async iterator `items()` that yields every item across pages.",
)
HELDOUT17_NEW = _new(
    "heldout17-new-code",
    "Write a Python module `linediff.py` that computes the shortest edit script between two lists of lines "
    "with Myers' O(ND) algorithm and renders it as unified diff hunks with a configurable number of context "
    "lines (`@@ -a,b +c,d @@` headers), plus `apply(hunks, lines)` that applies such a diff and raises on a "
    "mismatch, with docstrings and type hints, then pytest tests including empty inputs and no changes.",
)
HELDOUT17 = (HELDOUT17_PY, HELDOUT17_TS, HELDOUT17_NEW)
