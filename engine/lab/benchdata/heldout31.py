"""The thirty-first held-out set (``--suite heldout31``), written in the thirty-second round before its first run:
a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT31_PY = _edit(
    "heldout31-python", "libraryloans.py", "python",
    "Let members place holds on a title (`hold(name, title)`, served first come first served, so `give_back` "
    "keeps the copy for the next holder for three days instead of putting it back on the shelf), add "
    "`renew(name, barcode, today)` that extends a loan by `LOAN_DAYS` at most twice and never while someone holds "
    "the title, make `pay` refuse amounts that are not positive and return the change when a member overpays, "
    "add a `load(path)` classmethod that reads back everything `save` writes (loans and their dates included, "
    "so make `save` write them), and make `overdue` group its loans by member.",
)
HELDOUT31_TS = _edit(
    "heldout31-typescript", "countdown.ts", "typescript",
    "Add `addTime(seconds)` that extends a running or paused countdown (and a finished one, which goes back to "
    "paused), make `format` show hours as `h:mm:ss` once the remaining time reaches an hour, add a `warnAt` "
    "option whose callback fires once when the remaining time first drops to or below it, make `onDone` fire "
    "exactly once even if `tick` runs late, add `reset(seconds?)` returning to idle with the original or the "
    "given time, and let listeners subscribe with `on(event, callback)` returning an unsubscribe function.",
)
HELDOUT31_NEW = _new(
    "heldout31-new-code",
    "Write a Python module `wordwrap.py` with `wrap(text, width, indent=\"\", hanging=\"\")` that fills paragraphs "
    "(blank lines separate them) to at most `width` columns, breaking over-long words only when they cannot fit "
    "on a line of their own, keeping bullet (`- `, `* `, `1. `) items aligned under their text, and `justify` "
    "and `center` variants, raising ValueError when the width cannot hold the indent plus one character, with "
    "docstrings and type hints, then pytest tests.",
)
HELDOUT31 = (HELDOUT31_PY, HELDOUT31_TS, HELDOUT31_NEW)
