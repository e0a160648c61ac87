"""The forty-second held-out set (``--suite heldout42``), written at the start of the forty-third round, before
its first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never
seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT42_PY = _edit(
    "heldout42-python", "vetclinic.py", "python",
    "Let each vet have working hours of their own (a `hours: dict[str, tuple[int, int]]` on the clinic, "
    "falling back to OPENING/CLOSING) and refuse bookings outside them; let `book` take a `slots` count so a "
    "surgery can take several consecutive slots, with `end` following it; refuse a second booking for the same "
    "pet that overlaps any vet's appointment; add `reschedule(appt_id, new_start, vet=None)` that keeps the "
    "appointment's id; make `due_vaccinations` also list vaccines a pet of its species needs and never had "
    "(dogs: rabies, distemper, leptospirosis; cats: rabies, feline-leukemia), due from the pet's sixteenth "
    "week; add `no_show(appt_id)` and refuse bookings for owners with three no-shows in the last 180 days; "
    "and add a classmethod `load(path)` that reads what `export` writes back into appointments.",
)
HELDOUT42_TS = _edit(
    "heldout42-typescript", "splitpane.ts", "typescript",
    "Make the divider keyboard-accessible: `role=\"separator\"`, `tabindex=0`, `aria-orientation` and "
    "`aria-valuenow` in percent, arrow keys moving it by 2% (10% with Shift), Home and End to the limits; "
    "support touch and pen through pointer events with `setPointerCapture` instead of the mouse listeners; "
    "add `collapsible?: boolean` where a double-click on the divider collapses the first pane to zero and a "
    "second one restores the last position; accept `min` in pixels as well (`minPx?: number`) applied against "
    "the container's current size; persist the position in localStorage under a `storageKey` option; "
    "dispatch a `split-pane:resize` CustomEvent; and fix `destroy` to remove the mouseup listener and move "
    "both panes' children back into the container in order.",
)
HELDOUT42_NEW = _new(
    "heldout42-new-code",
    "Write a Python module `sqlmini.py` that runs a small SQL subset over lists of dicts: a tokenizer with "
    "line and column in its errors, a recursive-descent parser for `SELECT` with column lists, `*`, aliases "
    "(`AS`), `WHERE` with AND/OR/NOT, comparisons, `IN (...)`, `LIKE` with % and _, `IS NULL`, `ORDER BY` "
    "several keys ASC/DESC, `LIMIT`/`OFFSET`, `GROUP BY` with COUNT, SUM, AVG, MIN and MAX, and `HAVING`; an "
    "evaluator `query(sql, tables)` returning a list of dicts; raise `SqlError` with the position for "
    "unknown columns or tables; with docstrings, then pytest tests.",
)
HELDOUT42 = (HELDOUT42_PY, HELDOUT42_TS, HELDOUT42_NEW)
