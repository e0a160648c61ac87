"""The thirty-eighth held-out set (``--suite heldout38``), written in the thirty-ninth round after its policy change
and before its first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had
never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT38_PY = _edit(
    "heldout38-python", "carrental.py", "python",
    "Make `rent` refuse a customer who already has two open rentals and a start date in the past of the last "
    "rental's return; add `extend(rental_id, days)` that moves the due date unless the car is booked; make "
    "`return_car` refuse an odometer reading below the start; give `invoice` a weekly rate (seven days cost six) "
    "and return an `Invoice` dataclass with its lines instead of a float; add `utilisation(start, end)` per "
    "category; add a classmethod `load(path)` that reads what `save` writes (customers too, which `save` must "
    "now write); and make `report` list overdue cars first with the days they are late.",
)
HELDOUT38_TS = _edit(
    "heldout38-typescript", "pollwidget.ts", "typescript",
    "Let a voter change their vote until the poll closes (`changeVote`), emitting once; add a `maxChoices` "
    "option for multiple-choice polls; make `winner` return every option tied for first; make `percentages` "
    "add up to exactly 100 with largest-remainder rounding; add `addOption(label)` that only works before the "
    "first vote; add `fromJSON(data)` that restores what `toJSON` writes, ballots included; make `render` mark "
    "the voter's own choices with `(x)` and show the total number of voters on a last line; and let `close` "
    "take an optional reason shown by `render`.",
)
HELDOUT38_NEW = _new(
    "heldout38-new-code",
    "Write a Python module `ical.py` that parses iCalendar (.ics) text: unfold continuation lines, split "
    "properties with their parameters (`DTSTART;TZID=Europe/Paris:20240101T090000`), read `VEVENT` blocks into "
    "an `Event` dataclass (uid, summary, start, end, location, description, all-day flag for `VALUE=DATE`), "
    "unescape `\\n`, `\\,` and `\\;`, expand a `RRULE` with `FREQ=DAILY` or `WEEKLY`, `COUNT`, `UNTIL` and "
    "`INTERVAL` into occurrences; raise `ValueError` with the line number on malformed input; with docstrings "
    "and type hints, then pytest tests.",
)
HELDOUT38 = (HELDOUT38_PY, HELDOUT38_TS, HELDOUT38_NEW)
