"""The thirty-sixth held-out set (``--suite heldout36``), written at the start of the thirty-seventh round before its
first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT36_PY = _edit(
    "heldout36-python", "greenhouse.py", "python",
    "Make `tick` close a valve only after the minutes of the rule that opened it (keep that rule on the zone), "
    "never water a zone whose latest temperature is above 35, and skip a zone watered less than an hour ago; "
    "make `latest` ignore readings older than a `max_age` argument (default 30 minutes); add "
    "`average(zone_name, kind, since)` and `dry_zones()` listing zones below their target; add "
    "`remove_zone(name)` that also drops its rules; make `record` reject moisture outside 0-100; add a "
    "classmethod `load(path, clock)` that reads what `save` writes, with the valve states; and make "
    "`report` show the latest temperature and the time the zone was last watered.",
)
HELDOUT36_TS = _edit(
    "heldout36-typescript", "filetree.ts", "typescript",
    "Add keyboard navigation: `moveUp()`, `moveDown()` over the visible paths, `ArrowRight` to expand or go to "
    "the first child and `ArrowLeft` to collapse or go to the parent, through a `key(name)` method; add "
    "`filter(query)` that shows only files whose names contain the query (case-insensitive) with their "
    "folders expanded, and `clearFilter()`; add `expandAll()` and `collapseAll()`; make `render` show folder "
    "sizes when `showSizes` is on, formatted as B, KB or MB with one decimal; make `select` of a folder "
    "expand it; and add `rename(path, newName)` that keeps the selection and the expanded state.",
)
HELDOUT36_NEW = _new(
    "heldout36-new-code",
    "Write a Python module `semverrange.py` that parses npm-style version ranges: a `Version` dataclass "
    "(major, minor, patch, prerelease) that orders prereleases before releases; a `parse_range(text)` that "
    "understands `^1.2.3`, `~1.2`, `>=1.0 <2.0`, `1.x`, hyphen ranges like `1.2 - 1.4` and `||` between "
    "alternatives; `satisfies(version, range)`; `max_satisfying(versions, range)`; and clear `ValueError` "
    "messages for bad input, with docstrings and type hints, then pytest tests.",
)
HELDOUT36 = (HELDOUT36_PY, HELDOUT36_TS, HELDOUT36_NEW)
