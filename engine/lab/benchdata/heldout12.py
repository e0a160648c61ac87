"""The twelfth held-out set (``--suite heldout12``), written after the sixteenth round (drafts cut
at the end-of-generation token) and before its first run: a Python edit, a TypeScript edit and
new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT12_PY = _edit(
    "heldout12-python", "iniconf.py", "python",
    "Support values continued on indented lines after an entry (joined with newlines), a `[DEFAULT]` section "
    "whose keys every other section falls back to, a `set(section, key, value)` method that creates the "
    "section when missing, and a `dumps() -> str` that writes the configuration back in INI form.",
)
HELDOUT12_TS = _edit(
    "heldout12-typescript", "virtuallist.ts", "typescript",
    "Add an `overscan` option (rows rendered beyond each edge of the viewport, default 2) to `visibleRange`, "
    "let `scrollToIndex` take an `align` of \"auto\" | \"start\" | \"center\" | \"end\", and add `onRangeChange` "
    "listeners that are called with the new range whenever a scroll, resize or count change moves it.",
)
HELDOUT12_NEW = _new(
    "heldout12-new-code",
    "Write a Python module `mdtoc.py` with `headings(markdown: str) -> list[Heading]` (a dataclass with level, "
    "title and a GitHub-style anchor, duplicate anchors numbered -1, -2, ...) that reads ATX and setext "
    "headings and skips fenced code blocks, and `render_toc(headings, max_level=3) -> str` printing a nested "
    "Markdown list of links, with docstrings, then pytest tests for each case.",
)
HELDOUT12 = (HELDOUT12_PY, HELDOUT12_TS, HELDOUT12_NEW)
