"""The sixteenth held-out set (``--suite heldout16``), written after the twentieth round (a followed
proposal born of a short match counts its run once it has run into a copying reply's longer
match) and before its first run: a Python edit, a TypeScript edit and new Python code on files
and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT16_PY = _edit(
    "heldout16-python", "logrotate.py", "python",
    "Add time-based rotation (`Policy.max_age_s`, rotating when the current file is older than that), gzip the "
    "rotated backups when `compress` is set (`.1.gz` names, kept through renames), make `write` accept bytes as "
    "well as str, and make `tail` read from the end of the file in blocks instead of reading it whole.",
)
HELDOUT16_TS = _edit(
    "heldout16-typescript", "undostack.ts", "typescript",
    "Make commands optionally async (`apply` and `revert` may return a Promise, and `execute`, `undo` and `redo` "
    "return Promises that run one at a time), add `transaction(label, fn)` that groups every command executed "
    "inside `fn` into one entry, let `onChange` listeners receive `{ canUndo, canRedo }`, and add a `savePoint()` "
    "with an `isDirty()` that compares against it.",
)
HELDOUT16_NEW = _new(
    "heldout16-new-code",
    "Write a Python module `cidr.py` with an `IPv4Network` class parsed from `a.b.c.d/n` strings: `__contains__` "
    "for addresses, `subnets(new_prefix)`, `supernet()`, `overlaps(other)`, `hosts()` as an iterator, and a "
    "function `collapse(networks)` that merges adjacent and overlapping networks, without the ipaddress module, "
    "with docstrings and type hints, then pytest tests for each including malformed input.",
)
HELDOUT16 = (HELDOUT16_PY, HELDOUT16_TS, HELDOUT16_NEW)
