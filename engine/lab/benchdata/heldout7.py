"""The seventh held-out set (``--suite heldout7``), written after the eleventh round (the side
layout's wide passes decided by the median of paired ratios) was done: a Python edit, a Rust
edit and new TypeScript code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT7_PY = _edit(
    "heldout7-python", "csvstats.py", "python",
    "Add a `median` to `ColumnStats`: keep the numeric values in a list `values` as they are added and "
    "return the median (StatsError when there are none), add it as a column of `table` and `format_table` "
    "after the mean, and give `summarize` a `skip_missing: bool = True` argument that, when False, raises "
    "StatsError naming the row number of the first empty value.",
)
HELDOUT7_RS = _edit(
    "heldout7-rust", "config.rs", "rust",
    "Add `pub fn get_bool(&self, section: &str, key: &str) -> Result<bool, ConfigError>` accepting true/false, "
    "yes/no, on/off and 1/0 (case-insensitive), reject a duplicate key within a section with a Syntax error "
    "naming the key, and strip inline comments that start with ` #` after a value.",
)
HELDOUT7_NEW = _new(
    "heldout7-new-code",
    "Write a TypeScript module `debounce.ts` exporting `debounce(fn, waitMs, { leading, trailing, maxWaitMs })` "
    "that returns a function with `cancel()` and `flush()` methods, fully typed with generics over the "
    "function's parameters, with TSDoc comments, then Jest tests for it that use fake timers.",
)
HELDOUT7 = (HELDOUT7_PY, HELDOUT7_RS, HELDOUT7_NEW)
