"""The nineteenth held-out set (``--suite heldout19``), written after the twenty-second round's second
change (a place the index found a token before the resync is the copy resuming; a resync's followed
run counts after 4 tokens) and before its first run: a Python edit, a TypeScript edit and new Python
code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT19_PY = _edit(
    "heldout19-python", "feedparse.py", "python",
    "Read each entry's author (RSS `author`, Atom `author/name`) and categories (RSS `category`, Atom "
    "`category term`) into new `Entry` fields, use Atom's `published` before `updated`, strip HTML tags from "
    "summaries, and add `Feed.by_category()` returning a dict from category to its entries.",
)
HELDOUT19_TS = _edit(
    "heldout19-typescript", "tabs.ts", "typescript",
    "Add a `manual` option for manual activation (arrow keys move focus only; Enter or Space selects), skip "
    "tabs that have the `disabled` attribute when moving, support vertical tablists (ArrowUp/ArrowDown when "
    "`aria-orientation` is vertical), and make `destroy()` remove the event listeners it added.",
)
HELDOUT19_NEW = _new(
    "heldout19-new-code",
    "Write a Python module `topo.py` with a `Graph` class for directed graphs of hashable nodes: add edges, "
    "a `toposort()` by Kahn's algorithm that raises a `CycleError` naming one cycle, `layers()` returning the "
    "nodes in dependency layers, and `reachable(node)`, with docstrings and type hints, then pytest tests "
    "covering empty graphs, self-loops and diamonds.",
)
HELDOUT19 = (HELDOUT19_PY, HELDOUT19_TS, HELDOUT19_NEW)
