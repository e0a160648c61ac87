"""The thirtieth held-out set (``--suite heldout30``), written in the thirty-first round before its first run:
a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT30_PY = _edit(
    "heldout30-python", "parkinglot.py", "python",
    "Record each payment as a `Payment` dataclass (plate, cents, when) in a list that `pay` appends to (give "
    "`pay` a `now` argument) and that `save` stores, add a `load(path)` classmethod reading back what `save` "
    "writes (datetimes included), add `reserve(plate, space, until)` that keeps a space out of `enter` for other "
    "plates until that time but gives it to the plate that reserved it, make `fee` apply the daily cap to each "
    "started 24-hour day instead of to the whole stay, and make `summary` count the free spaces by size and mark "
    "cars parked for over a day.",
)
HELDOUT30_TS = _edit(
    "heldout30-typescript", "starrating.ts", "typescript",
    "Add an `allowHalf` option under which `click(star, fraction)` picks the half star when fraction is below "
    "0.5, `states` can return a new `\"half\"` state and the arrow keys step by 0.5, add `setReadOnly(readOnly)` "
    "that drops any hover preview and notifies the listeners, make Home and End set the rating to 0 and to the "
    "maximum, let `onRate` return a promise (so `click` becomes async and rolls the rating back, notifying again, "
    "when it rejects), and add `reset()` that restores the initial value.",
)
HELDOUT30_NEW = _new(
    "heldout30-new-code",
    "Write a Python module `durations.py` with `parse_duration(text)` turning strings like `1h30m`, `90s`, "
    "`2d 4h`, `1.5h` and ISO 8601 `PT1H30M` or `P1DT2H` into a `timedelta`, `format_duration(td, largest=2)` "
    "writing at most that many of the largest non-zero units compactly (`1d 2h`, `45s`, `0s`), and "
    "`total(texts)` summing several, raising ValueError that names the offending part on bad input (unknown or "
    "repeated units, empty strings, negative values), with docstrings and type hints, then pytest tests.",
)
HELDOUT30 = (HELDOUT30_PY, HELDOUT30_TS, HELDOUT30_NEW)
