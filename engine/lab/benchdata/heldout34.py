"""The thirty-fourth held-out set (``--suite heldout34``), written at the start of the thirty-fifth round before its
first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT34_PY = _edit(
    "heldout34-python", "gymclasses.py", "python",
    "Make `book` refuse a member whose level is below the session's level and a session that has already "
    "begun (a new `now` argument), and refuse a member already booked into another session that overlaps it; "
    "make `cancel` refund the credit only when cancelled at least 12 hours before the start, and skip waiting "
    "members without credits when promoting; add `reschedule(code, day, start)` that refuses clashes for the "
    "coach; add `attendance(code, present)` that records who came and `no_shows(member_id)`; and add "
    "`Gym.load(path)` reading the CSV that `export` writes, with the level and minutes added as columns.",
)
HELDOUT34_TS = _edit(
    "heldout34-typescript", "tagsinput.ts", "typescript",
    "Make `add` refuse a duplicate tag ignoring case, and trim and collapse inner spaces; add an optional "
    "`validate(tag)` in the options whose error message is kept in a new `error` getter until the next "
    "keystroke; let `type` split pasted text on newlines and semicolons too; add `ArrowLeft` and `ArrowRight` "
    "that select a chip when the text is empty and make `Backspace` remove the selected chip first; make "
    "`matches` skip suggestions already added and rank prefix matches before substring matches; and make "
    "`render` mark the selected chip with `*` and show `(n left)` when `maxTags` is set.",
)
HELDOUT34_NEW = _new(
    "heldout34-new-code",
    "Write a Python module `dupfinder.py` that finds duplicate files under a directory: group by size first, "
    "then by a hash of the first 4 KiB, then by a full SHA-256 read in chunks; skip symlinks and files it "
    "cannot read, reporting them; a `Group` dataclass with the size, digest and paths; `wasted_bytes()`; an "
    "option to hard-link duplicates to the first path with a dry run; and a `main(argv)` with `--min-size` "
    "and `--json`, with docstrings and type hints, then pytest tests.",
)
HELDOUT34 = (HELDOUT34_PY, HELDOUT34_TS, HELDOUT34_NEW)
