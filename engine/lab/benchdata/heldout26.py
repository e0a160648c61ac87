"""The twenty-sixth held-out set (``--suite heldout26``), written in the twenty-eighth round before its
first run and before any measurement of the round's change (llama.cpp rebuilt so its AMX kernels run):
a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT26_PY = _edit(
    "heldout26-python", "kanban.py", "python",
    "Make `tag` skip tags the card already has, give `Card` a `blocked_by: set[int]` and refuse to `move` a "
    "blocked card into the last column, add `remove(card_id)` and `set_due(card_id, due)`, and make `render` "
    "show each card's due date and tags, marking overdue cards with `!` when a `today` date is given.",
)
HELDOUT26_TS = _edit(
    "heldout26-typescript", "datepicker.ts", "typescript",
    "Disable and skip days outside `min` and `max`, close the panel on Escape and on a click outside it, let "
    "the arrow keys move a focused day and Enter select it, parse the input's value on `open` so the view "
    "starts at the typed date, and render the weekday names in the header starting at `firstDayOfWeek`.",
)
HELDOUT26_NEW = _new(
    "heldout26-new-code",
    "Write a Python module `cron_next.py` with a `parse(expr)` for five-field cron expressions (lists, ranges, "
    "steps and `*`), a `matches(schedule, when)` and a `next_run(schedule, after)` that finds the next matching "
    "minute without looping minute by minute, raising `ValueError` with the bad field named, with docstrings "
    "and type hints, then pytest tests.",
)
HELDOUT26 = (HELDOUT26_PY, HELDOUT26_TS, HELDOUT26_NEW)
