"""The sixth held-out set (``--suite heldout6``), written after the tenth round (the pick after a
plain step overlapped with that step on a GPU) was done: a Python edit, a C edit and new Go code
on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT6_PY = _edit(
    "heldout6-python", "jobqueue.py", "python",
    "Add an optional `delay: float = 0.0` argument to `submit`: a delayed job does not run before "
    "`clock() + delay`, and `run_next` skips (leaves queued) jobs that are not due yet. Also record in "
    "`Job` the time of each failed attempt in a list `failures`.",
)
HELDOUT6_C = _edit(
    "heldout6-c", "ringbuf.c", "c",
    "Add `size_t rb_discard(ringbuf_t *rb, size_t len)` that drops up to len of the oldest bytes and returns "
    "how many it dropped, and make `rb_clear` also reset `overruns`. Use memcpy in `rb_write` and `rb_read` "
    "to copy in at most two contiguous chunks instead of byte by byte.",
)
HELDOUT6_NEW = _new(
    "heldout6-new-code",
    "Write a Go package `semver` with a type `Version` (major, minor, patch, pre-release identifiers), "
    "`Parse(s string) (Version, error)`, `(v Version) String() string` and `Compare(a, b Version) int` "
    "following Semantic Versioning 2.0.0 precedence, with doc comments, then table-driven tests for it.",
)
HELDOUT6 = (HELDOUT6_PY, HELDOUT6_C, HELDOUT6_NEW)
