"""The twenty-ninth held-out set (``--suite heldout29``), written in the thirtieth round before its first run:
a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT29_PY = _edit(
    "heldout29-python", "shelfreads.py", "python",
    "Keep a history of past loans (borrower, since, returned date) that `give_back` appends to and that `save` "
    "stores, add a `load(path)` classmethod reading back what `save` writes (read dates included), let `lend` "
    "refuse a borrower who has an overdue loan, add `renew(isbn, today, days=14)` that extends a loan at most "
    "twice, and make `summary` group the lent books by borrower with overdue ones marked.",
)
HELDOUT29_TS = _edit(
    "heldout29-typescript", "stepper.ts", "typescript",
    "Add a `goTo(stepId)` that jumps back to any visited step (never forward past an unvalidated one), keep the "
    "ids of visited steps in a set exposed as `visited`, make `validate` able to return a promise (so `next` "
    "becomes async and resolves to whether it moved), add an `onFinish` error path that records the thrown "
    "message under the last step's id, and add `reset()` that restores the initial data and the first step.",
    stored="stepper29.ts",  # the twenty-third set has a stepper.ts of its own
)
HELDOUT29_NEW = _new(
    "heldout29-new-code",
    "Write a Python module `cronexpr.py` with `parse(expr)` turning a five-field cron expression (minute, hour, "
    "day of month, month, day of week) into sets of allowed values, supporting `*`, lists, ranges, steps like "
    "`*/15` and `1-30/5`, and month and weekday names, `matches(expr, dt)` and `next_after(expr, dt)` returning "
    "the next matching minute, raising ValueError with the field's name on bad input, with docstrings and type "
    "hints, then pytest tests.",
)
HELDOUT29 = (HELDOUT29_PY, HELDOUT29_TS, HELDOUT29_NEW)
