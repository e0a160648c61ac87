"""The thirty-fifth held-out set (``--suite heldout35``), written at the start of the thirty-sixth round before its
first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT35_PY = _edit(
    "heldout35-python", "bikeshare.py", "python",
    "Make `unlock` skip broken bikes and refuse a rider whose balance is below zero, and take an optional "
    "`electric` argument that picks an electric bike; charge electric bikes 0.25 a minute and make the first "
    "45 minutes free for riders with an annual pass (a new `buy_pass(rider_id)` that charges 90); make "
    "`return_bike` to a full dock suggest the nearest dock with free slots in the error, using a new "
    "`distance` table set by `link(a, b, km)`; add `rebalance()` that moves bikes from docks over 80% full to "
    "docks under 20% full and returns the moves; add `history(rider_id)` and `busiest_docks(n)`; and make "
    "`export` write the minutes and whether the bike was electric.",
)
HELDOUT35_TS = _edit(
    "heldout35-typescript", "rangeslider.ts", "typescript",
    "Make `setLow` and `setHigh` accept strings such as `\"$1,200\"` by stripping everything but digits, "
    "the dot and the minus sign, and ignore what does not parse; add `PageUp`, `PageDown` (ten steps), "
    "`Home` and `End` to `key`, and let `Shift` held (a second argument) move ten steps too; add "
    "`reset()` and `setRange(low, high)` that emits once with the thumb that moved farthest; add an "
    "optional `marks` option whose values `render` shows as `|` where no thumb is; make `onChange` "
    "listeners run after a change only once per animation frame via an injectable scheduler; and add "
    "`toJSON()` and `static fromJSON(options, json)`.",
)
HELDOUT35_NEW = _new(
    "heldout35-new-code",
    "Write a Python module `diffstat.py` that parses a unified diff (as `git diff` prints it): a `FileDiff` "
    "dataclass with the old and new paths, whether it is new, deleted, renamed or binary, and its hunks; "
    "a `Hunk` dataclass with the ranges and lines; counts of added and removed lines per file and in total; "
    "a `render(stats, width)` that prints a histogram like `git diff --stat`; and a `main(argv)` reading "
    "a file or stdin with `--numstat` and `--json`, with docstrings and type hints, then pytest tests.",
)
HELDOUT35 = (HELDOUT35_PY, HELDOUT35_TS, HELDOUT35_NEW)
