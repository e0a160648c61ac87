"""Held-out workloads (``--suite heldout``), written after the engine's tuning ended and never used
to tune it: a Python edit, a JavaScript edit and new code, in the same form as the bench's own."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT_PY = _edit(
    "heldout-python", "scheduler.py", "python",
    "Add a method `pending(self) -> list[str]` after `ready` that returns the names of the jobs not yet done, "
    "highest priority first, and make `add` raise SchedulerError when `depends_on` names a job that does not exist.",
)
HELDOUT_JS = _edit(
    "heldout-javascript", "emitter.js", "javascript",
    "Rename the method `listenerCount` to `count`, and make `off` remove wildcard handlers too when the event is \"*\".",
)
HELDOUT_NEW = _new(
    "heldout-new-code",
    "Write a Python module `trie.py` with a class `Trie` that supports `insert(word)`, `contains(word)`, "
    "`starts_with(prefix) -> list[str]` (sorted), `remove(word) -> bool` and `__len__`, with docstrings and "
    "type hints. Then write pytest tests for it.",
)
HELDOUT = (HELDOUT_PY, HELDOUT_JS, HELDOUT_NEW)
