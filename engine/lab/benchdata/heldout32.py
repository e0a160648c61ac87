"""The thirty-second held-out set (``--suite heldout32``), written at the start of the thirty-third round before its
first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT32_PY = _edit(
    "heldout32-python", "recipebook.py", "python",
    "Make `Ingredient.describe` convert to the larger unit when an amount reaches it (1000 g becomes 1 kg, "
    "1000 ml 1 l, 3 tsp 1 tbsp) and print mixed numbers (`1 1/2 cup`), let `shopping_list` add amounts of the "
    "same ingredient given in different units of one kind, add `remove_ingredient(name)` and `rename(old, new)` "
    "to `Recipe`, make `for_servings` refuse a non-positive count, make `save` write the tags and `load` read "
    "them back, and add `RecipeBook.search(*words)` that returns recipes matching every word, best match first.",
)
HELDOUT32_TS = _edit(
    "heldout32-typescript", "chatinput.ts", "typescript",
    "Add `next()` that walks forward through the sent history and restores the unsent draft after the newest "
    "message, make `previous()` keep the draft it leaves, add `deleteWord()` (ctrl+backspace) and "
    "`moveWord(delta)`, make `suggestions()` stop at whitespace after the `@` and rank names that start with "
    "the partial before names containing it, cap the history at `historyLimit` (default 50), keep a sent "
    "message out of the history when it repeats the last one, and make `send` refuse text over `maxLength` "
    "that was pasted through a new `paste(text)` method, returning a reason.",
)
HELDOUT32_NEW = _new(
    "heldout32-new-code",
    "Write a Python module `csvdiff.py` with `diff(old_rows, new_rows, key)` comparing two lists of CSV rows "
    "(dicts) by a key column and returning added, removed and changed rows (each change naming its columns "
    "with old and new values), `load(path)` reading a CSV file with a header, a `format_diff` that prints the "
    "result as a readable report, and a `main(argv)` command line taking two paths and `--key`, exiting 1 "
    "when the files differ, with docstrings and type hints, then pytest tests.",
)
HELDOUT32 = (HELDOUT32_PY, HELDOUT32_TS, HELDOUT32_NEW)
