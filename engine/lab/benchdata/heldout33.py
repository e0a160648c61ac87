"""The thirty-third held-out set (``--suite heldout33``), written at the start of the thirty-fourth round before its
first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT33_PY = _edit(
    "heldout33-python", "helpdesk.py", "python",
    "Make `dispatch` give each ticket to a free agent whose skills include the ticket's new `tags` (any agent "
    "when it has none), most urgent ticket first and the least loaded agent among equals, add "
    "`reopen(number, note)` that clears `closed`, add `escalate(number)` raising the priority one step and "
    "refusing past urgent, make `close` refuse a ticket that is already closed and record who closed it, "
    "make `assign` refuse a closed ticket, add `stats(now)` returning open, closed, overdue and the median "
    "hours to close, and make `save` write `closed` and `tags` and add a `HelpDesk.load(path)` classmethod.",
)
HELDOUT33_TS = _edit(
    "heldout33-typescript", "accordion.ts", "typescript",
    "Make `focusNext` and `focusPrevious` skip disabled sections, add `Home` and `End` keys that focus the "
    "first and last enabled header, add `openAll()` and `closeAll()` (openAll refused unless `multiple`), add "
    "`removeSection(id)` that keeps focus on a sensible neighbour, make `addSection` refuse a duplicate id, "
    "let `defaultOpen` in the options name the sections open at start, and make `render` indent the body text "
    "of each open section (a new optional `body` on `Section`) under its header.",
)
HELDOUT33_NEW = _new(
    "heldout33-new-code",
    "Write a Python module `tailer.py` with a `Tailer` class that follows a growing log file like `tail -f`: "
    "`read_new()` returning complete new lines since the last call (keeping a partial last line for later), "
    "noticing when the file was truncated or replaced (by size and inode) and starting over, a `grep(pattern)` "
    "filter, `last(n)` reading the final n lines of a large file without reading all of it, and a `main(argv)` "
    "with `-n` and `--follow`, with docstrings and type hints, then pytest tests.",
)
HELDOUT33 = (HELDOUT33_PY, HELDOUT33_TS, HELDOUT33_NEW)
