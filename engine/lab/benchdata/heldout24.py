"""The twenty-fourth held-out set (``--suite heldout24``), written in the twenty-sixth round after its
only change (bench instrumentation: each request's single-row step time, no policy change) and before
its first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had
never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT24_PY = _edit(
    "heldout24-python", "invoices.py", "python",
    "Apply the discount before tax in proportion to the taxable share of the subtotal, reject a negative "
    "quantity or price in `add` with `ValueError`, make `pay` refuse more than the balance, add a "
    "`credit_note(invoice, reason)` that returns a new invoice with negated items, and show the tax rate "
    "as a percentage in `render`.",
)
HELDOUT24_TS = _edit(
    "heldout24-typescript", "carousel.ts", "typescript",
    "Pause autoplay while the pointer is over the carousel and resume after, support the left and right "
    "arrow keys when it has focus, set `aria-current` on the active dot, preload the next slide's image, "
    "and make `show` throw a `RangeError` for an index out of range instead of ignoring it.",
)
HELDOUT24_NEW = _new(
    "heldout24-new-code",
    "Write a Python module `textdiff.py` with `diff_lines(old, new)` that returns a list of operations "
    "(`equal`, `insert`, `delete`) from a longest-common-subsequence table, `unified(old, new, context=3)` "
    "that formats them as unified diff hunks with `@@` headers, and `apply(old, ops)` that rebuilds the new "
    "text, raising `ValueError` on ops that do not fit, with docstrings and type hints, then pytest tests.",
)
HELDOUT24 = (HELDOUT24_PY, HELDOUT24_TS, HELDOUT24_NEW)
