"""The twenty-second held-out set (``--suite heldout22``), written after the twenty-fourth round (no
policy change since the twenty-third) and before its first run: a Python edit, a TypeScript edit and
new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT22_PY = _edit(
    "heldout22-python", "timesheet.py", "python",
    "Count overtime per day as well (hours past 8 in a day are overtime even when the week stays under 40, "
    "and no hour is counted twice), reject an entry that overlaps another of the same employee, add an "
    "unpaid break in minutes to `Entry` that `hours` subtracts, and make `load_entries` report the CSV line "
    "number in any error it raises.",
)
HELDOUT22_TS = _edit(
    "heldout22-typescript", "modal.ts", "typescript",
    "Let Escape close the dialog, set `aria-modal` and label the dialog by its heading's id, add an optional "
    "`confirmLabel` with an `onConfirm` callback that shows a second button, stop the page behind from "
    "scrolling while the dialog is open, and add a `destroy()` that closes it and removes its listeners.",
)
HELDOUT22_NEW = _new(
    "heldout22-new-code",
    "Write a Python module `jsonpointer.py` implementing RFC 6901 JSON Pointers: `parse(pointer)` into "
    "reference tokens (with ~0 and ~1 unescaping), `resolve(doc, pointer)`, `set_value(doc, pointer, value)` "
    "supporting the `-` array index for appending, and `remove(doc, pointer)`, raising a `PointerError` with "
    "a clear message, with docstrings and type hints, then pytest tests.",
)
HELDOUT22 = (HELDOUT22_PY, HELDOUT22_TS, HELDOUT22_NEW)
