"""The twenty-eighth held-out set (``--suite heldout28``), written in the twenty-ninth round before its first run:
a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT28_PY = _edit(
    "heldout28-python", "watering.py", "python",
    "Reject a non-positive `every_days` or `amount_ml` in `add`, make `water` refuse a day earlier than the "
    "plant's last watering, let `week` and `water_needed` take a `days` parameter (default 7) for the plan's "
    "length, add a `load(path)` classmethod reading back what `save` writes (with each plant's history, which "
    "`save` must now store), and make `report` list the due plants under their room, rooms sorted by name, with "
    "how many days overdue each one is.",
)
HELDOUT28_TS = _edit(
    "heldout28-typescript", "colorpicker.ts", "typescript",
    "Make the palette cells focusable buttons with `aria-selected` on the chosen one and move the selection with "
    "the arrow keys, close the panel on Escape and on a click outside, keep the last picked colours in a recent "
    "row above the grid (a constructor option `recentMax`, default 5), give the hex input an `invalid` class "
    "while its text is not a colour, and add a `destroy()` that removes the elements and document listeners.",
)
HELDOUT28_NEW = _new(
    "heldout28-new-code",
    "Write a Python module `globmatch.py` with `translate(pattern)` compiling a glob pattern to a regex, where "
    "`?` matches one character except `/`, `*` any run without `/`, `**` any number of whole path segments, "
    "`[abc]`, `[a-z]` and `[!x]` are character classes and a backslash escapes the next character, a "
    "`match(pattern, path)`, and `filter_paths(patterns, paths)` where a pattern starting with `!` excludes, "
    "with docstrings and type hints, then pytest tests.",
)
HELDOUT28 = (HELDOUT28_PY, HELDOUT28_TS, HELDOUT28_NEW)
