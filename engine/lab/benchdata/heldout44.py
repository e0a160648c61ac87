"""The forty-fourth held-out set (``--suite heldout44``), written at the start of the forty-fifth round, before
its first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never
seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT44_PY = _edit(
    "heldout44-python", "coworking.py", "python",
    "Fix `Booking.hours` and `price` to count bookings that cross midnight or last over a day (use "
    "`total_seconds`); refuse bookings whose end is not after their start; make `check_in` raise "
    "`BookingError` for an unknown or cancelled booking and for a check-in more than 15 minutes before the "
    "start; add `release_no_shows(now)` that cancels bookings not checked in 30 minutes after their start "
    "without refunding them; give part-time members 40 discounted hours a month and bill the rest at the full "
    "rate; skip cancelled bookings in `invoice` and return a frozen `Invoice` dataclass with lines, credits "
    "used and total; let `free_desks` take `quiet: bool | None`; and add a classmethod `load(path, desks, "
    "members)` reading back what `export` writes.",
)
HELDOUT44_TS = _edit(
    "heldout44-typescript", "tablesort.ts", "typescript",
    "Stop mutating the caller's rows when sorting (sort a copy), compare numbers, dates and strings properly "
    "(strings with `localeCompare` and `numeric: true`) and keep the sort stable; render cells with "
    "`textContent` instead of `innerHTML` unless a column sets `html: true`; clamp the page when filtering or "
    "setting rows shrinks the data and add pager buttons with a \"page X of Y\" label that disables at the "
    "ends; put `aria-sort` on sorted headers and make sortable headers buttons reachable by keyboard; add "
    "`filterKeys?: (keyof T)[]` to limit which columns the filter searches; add row selection with "
    "checkboxes (`selectable?: boolean`, `getSelected(): T[]`, a select-all box for the page); and make "
    "`destroy` remove every listener.",
)
HELDOUT44_NEW = _new(
    "heldout44-new-code",
    "Write a Python module `jsonpatch.py`: RFC 6901 JSON Pointer parsing and resolution (with `~0`/`~1` "
    "escapes and the `-` array index), RFC 6902 JSON Patch `apply(doc, patch)` supporting add, remove, "
    "replace, move, copy and test without mutating the input (raising `PatchError` that names the failing "
    "operation's index), and `diff(a, b)` producing a patch that turns `a` into `b`; with docstrings, then "
    "pytest tests.",
)
HELDOUT44 = (HELDOUT44_PY, HELDOUT44_TS, HELDOUT44_NEW)
