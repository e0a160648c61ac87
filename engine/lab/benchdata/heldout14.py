"""The fourteenth held-out set (``--suite heldout14``), written after the eighteenth round (the
calibration times steps and passes at an edit's context length, which turned flash attention off
on this CPU) and before its first run: a Python edit, a TypeScript edit and new Python code on
files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT14_PY = _edit(
    "heldout14-python", "mdtable.py", "python",
    "Let `Table.render` wrap cells longer than a `max_width` argument onto continuation lines, make `parse` accept "
    "rows without the outer pipes and escaped pipes (`\\|`) inside cells, add a `sort(name, reverse=False)` method "
    "that sorts numerically when every cell of the column is a number, and raise `TableError` with the row number "
    "when a parsed row has the wrong number of cells.",
)
HELDOUT14_TS = _edit(
    "heldout14-typescript", "formstate.ts", "typescript",
    "Add async validators that run after the sync ones and whose stale results are ignored when the value changed "
    "meanwhile, let a field's validators depend on other fields (re-validate dependents when a field they name "
    "changes, given as `dependsOn` in the field config), add `setErrors` for server-side errors returned by `send`, "
    "and make `submit` return the first invalid field's name instead of `false`.",
)
HELDOUT14_NEW = _new(
    "heldout14-new-code",
    "Write a Python module `topo.py` with a `DependencyGraph` class: `add(node, depends_on=())`, `remove(node)`, "
    "`order()` returning a topological order that is stable (ties in insertion order), `layers()` grouping nodes "
    "that can run in parallel, `cycle()` returning one cycle as a list or None, and `descendants(node)`, with "
    "docstrings and type hints, then pytest tests for each method.",
)
HELDOUT14 = (HELDOUT14_PY, HELDOUT14_TS, HELDOUT14_NEW)
