"""The fifteenth held-out set (``--suite heldout15``), written after the nineteenth round (KV state
copies through one buffer reserved for the context, the receiving cache's data left as it is)
and before its first run: a Python edit, a TypeScript edit and new Python code on files and
tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT15_PY = _edit(
    "heldout15-python", "envfile.py", "python",
    "Support multi-line values in double quotes that span several lines, a `${VAR:-default}` form that uses the "
    "default when the variable is unset or empty, and `load(..., required=(...))` raising `EnvError` that names "
    "every missing key; make `dump` keep the order of insertion instead of sorting, and let `parse` report the "
    "column of an invalid key in its error.",
)
HELDOUT15_TS = _edit(
    "heldout15-typescript", "toastqueue.ts", "typescript",
    "Add `pause()` and `resume()` that stop every auto-dismiss timer and restart each with the time it had left, "
    "give toasts an optional action (`{ label, run }`) that dismisses the toast after running, show errors ahead "
    "of waiting toasts of other kinds, and make `show` return an object with `id`, `update(message)` and "
    "`dismiss()` instead of a bare id.",
)
HELDOUT15_NEW = _new(
    "heldout15-new-code",
    "Write a Python module `bloom.py` with a `BloomFilter` class sized from an expected item count and a target "
    "false-positive rate: `add`, `__contains__`, `union` and `intersection` with a filter of the same size, "
    "`estimated_count()`, and `to_bytes()` / `from_bytes()`, using hashlib for double hashing, with docstrings "
    "and type hints, then pytest tests for each method including the false-positive rate on random strings.",
)
HELDOUT15 = (HELDOUT15_PY, HELDOUT15_TS, HELDOUT15_NEW)
