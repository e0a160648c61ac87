"""The twenty-third held-out set (``--suite heldout23``), written after the twenty-fifth round's policy
change (an echo run counts in a reply that copies its prompt more than itself) and before its first
run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT23_PY = _edit(
    "heldout23-python", "playlist.py", "python",
    "Make `remove` keep the current track playing when another one is removed, let `shuffle` keep the "
    "current track first, add a `move(old, new)` that reorders tracks, raise `ValueError` for an unknown "
    "repeat mode, and make `parse_m3u` keep the file path line after each `#EXTINF` as `Track.path`.",
)
HELDOUT23_TS = _edit(
    "heldout23-typescript", "stepper.ts", "typescript",
    "Add a `goTo(id)` that jumps only to a visited step or the next one, show the validation error from a "
    "`validate` that may now return a string, move focus to the step's first input after each render, "
    "let Enter in the body act as Next, and add `reset()` that clears the visited steps and starts over.",
)
HELDOUT23_NEW = _new(
    "heldout23-new-code",
    "Write a Python module `cidr.py` for IPv4 networks without the ipaddress module: `parse(text)` of "
    "`a.b.c.d/n` into a `Network` dataclass, `contains(network, address)`, `subnets(network, new_prefix)`, "
    "`summarize(networks)` that merges adjacent and overlapping networks, raising `ValueError` with a clear "
    "message on bad input, with docstrings and type hints, then pytest tests.",
)
HELDOUT23 = (HELDOUT23_PY, HELDOUT23_TS, HELDOUT23_NEW)
