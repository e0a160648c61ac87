"""The forty-third held-out set (``--suite heldout43``), written at the start of the forty-fourth round, before
its first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never
seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT43_PY = _edit(
    "heldout43-python", "bakery.py", "python",
    "Give each product a daily capacity (`capacity: int | None`) and refuse orders that would take a day's "
    "units past it; fix `production_plan` to round batches up only when there is a remainder; let `cancel` "
    "refuse orders collected already and refund loyalty points of paid ones; add `amend(order_id, items)` "
    "that replaces an order's lines under the same checks; let customers redeem loyalty points in `pay` "
    "(`redeem: int = 0`, 100 points off one euro, never below zero); add `no_shows(day)` listing paid orders "
    "not collected by closing time; make `revenue` group by product when `by_sku=True`; and add a "
    "classmethod `load(path, products, customers)` that reads what `export` writes back into orders.",
)
HELDOUT43_TS = _edit(
    "heldout43-typescript", "breadcrumbs.ts", "typescript",
    "Wrap the list in a `<nav aria-label=\"Breadcrumb\">` and mark the last crumb with `aria-current=\"page\"`; "
    "render separators with CSS classes and `aria-hidden` instead of list items; collapse by measured width "
    "with a ResizeObserver on the root (dropping middle crumbs until the list fits, keeping the first and "
    "last) instead of the window resize listener and `maxVisible`; turn the ellipsis into a menu button with "
    "`aria-expanded` that opens a dropdown of the hidden crumbs, closed by Escape or a click outside; support "
    "arrow-key focus movement between crumbs; add `truncate?: number` that shortens long labels with a title "
    "attribute holding the full text; and make `destroy` disconnect the observer and remove the nav.",
)
HELDOUT43_NEW = _new(
    "heldout43-new-code",
    "Write a Python module `textdiff.py`: Myers' O(ND) diff over lists of lines returning equal/insert/delete "
    "opcodes, `unified(a, b, fromfile, tofile, context=3)` producing unified-diff text with correct hunk "
    "headers, `parse_patch(text)` reading such text back into hunks (raising `PatchError` with the line number "
    "on malformed input), and `apply(lines, hunks, fuzz=0)` that applies hunks with offset search and "
    "optional fuzz, reporting which hunks failed; with docstrings, then pytest tests.",
)
HELDOUT43 = (HELDOUT43_PY, HELDOUT43_TS, HELDOUT43_NEW)
