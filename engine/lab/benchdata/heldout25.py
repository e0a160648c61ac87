"""The twenty-fifth held-out set (``--suite heldout25``), written in the twenty-seventh round before any
change and before its first run (first on an H200, then on a 2-core Xeon with AMX): a Python edit, a
TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT25_PY = _edit(
    "heldout25-python", "reservations.py", "python",
    "Make `cancel` raise `KeyError` when no booking matches instead of doing nothing, make `move` check "
    "that the table is free at the new time and put the booking back if it is not, reject a party of "
    "zero or less in `reserve`, add a `no_show(booking)` that records a note and frees the table, and "
    "show each booking's phone number in `sheet` when it has one.",
)
HELDOUT25_TS = _edit(
    "heldout25-typescript", "tooltip.ts", "typescript",
    "Show the tooltip on keyboard focus and hide it on blur and on the Escape key, give it `role=\"tooltip\"` "
    "and link it to the target with `aria-describedby`, flip the placement to the opposite side when it would "
    "leave the viewport, and make `destroy` clear a pending show timer.",
)
HELDOUT25_NEW = _new(
    "heldout25-new-code",
    "Write a Python module `calc.py` with a `tokenize(text)` that yields numbers, names, operators and "
    "parentheses, a recursive-descent `parse(text)` that builds an expression tree with the usual precedence "
    "and right-associative `^`, and `evaluate(tree, variables)` that raises `NameError` for unknown names and "
    "`ZeroDivisionError` on division by zero, with docstrings and type hints, then pytest tests.",
)
HELDOUT25 = (HELDOUT25_PY, HELDOUT25_TS, HELDOUT25_NEW)
