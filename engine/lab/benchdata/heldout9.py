"""The ninth held-out set (``--suite heldout9``), written after the thirteenth round (later
positions pooled, a followed copy's own run, an opening copy after a fence line) was done: a
Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT9_PY = _edit(
    "heldout9-python", "pager.py", "python",
    "Support pages in both directions: give `Page` a `prev_cursor` (None on the first page), let "
    "`Pager.page` take `before: str | None` as well as `cursor` (passing both raises ValueError) and return "
    "the `limit` items just before that key, and make `walk` accept `reverse: bool = False`.",
)
HELDOUT9_TS = _edit(
    "heldout9-typescript", "debounce.ts", "typescript",
    "Add a `maxWaitMs` option to `debounce` (an options object as the third parameter, with `clock` moving into "
    "it) so a steady stream of calls still runs `fn` at least that often, and give `throttle` a "
    "`{ leading, trailing }` options object (both default true) that turns either edge off.",
)
HELDOUT9_NEW = _new(
    "heldout9-new-code",
    "Write a Python module `intervals.py` with an `IntervalSet` class over half-open integer intervals: "
    "`add(start, end)` merging overlaps and touching ranges, `remove(start, end)` splitting where needed, "
    "`__contains__(point)`, `covered() -> int` and `gaps(start, end) -> list[tuple[int, int]]`, with "
    "docstrings, then pytest tests for merging, splitting and gaps.",
)
HELDOUT9 = (HELDOUT9_PY, HELDOUT9_TS, HELDOUT9_NEW)
