"""The eleventh held-out set (``--suite heldout11``), written after the fifteenth round (the KV
state copy's buffer) and before its first run: a Python edit, a TypeScript edit and new Python
code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT11_PY = _edit(
    "heldout11-python", "cronexpr.py", "python",
    "Support the shortcuts @hourly, @daily, @weekly, @monthly and @yearly in `Cron.parse`, accept `L` in the "
    "day field meaning the last day of the month, add a `previous_before(when)` method mirroring `next_after`, "
    "and make `CronError` messages name the whole expression as well as the field.",
)
HELDOUT11_TS = _edit(
    "heldout11-typescript", "history.ts", "typescript",
    "Merge consecutive backspaces into one step the way typing is merged, add `checkpoint()` that forces the "
    "next edit to start a new step, add an `onChange` listener list called with the buffer's value after "
    "apply, undo and redo, and make `undo`/`redo` take an optional count of steps.",
)
HELDOUT11_NEW = _new(
    "heldout11-new-code",
    "Write a Python module `diffstat.py` with `parse_unified_diff(text: str) -> list[FileDiff]` (a dataclass "
    "with old and new paths, added and removed line counts and its hunks), handling new, deleted and renamed "
    "files, a `summary(diffs) -> str` printing a git-style diffstat with bars scaled to 40 columns, with "
    "docstrings, then pytest tests for each case.",
)
HELDOUT11 = (HELDOUT11_PY, HELDOUT11_TS, HELDOUT11_NEW)
