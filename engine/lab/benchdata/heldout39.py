"""The thirty-ninth held-out set (``--suite heldout39``), written at the start of the fortieth round, before its
first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT39_PY = _edit(
    "heldout39-python", "tournament.py", "python",
    "Make `pair_next_round` refuse to pair while the last round still has games without a result, and balance "
    "colours: white goes to the player who has had black more often (the higher-ranked one on a tie); make "
    "`record_result` refuse to overwrite a result unless `force=True`, and accept the forfeits `+/-` and `-/+`, "
    "which score like a win but leave the game out of `sonneborn_berger`; add `withdraw(player_id)` so a "
    "withdrawn player is never paired again but keeps the games already played; give `buchholz` a `cut` "
    "argument that drops the lowest opponent scores and use Buchholz Cut-1 as the first tie-break in "
    "`standings`, with the direct encounter between tied players before the rating; make `report` give tied "
    "players a shared rank such as `3-4.`; and add a classmethod `load(path)` that reads what `save` writes.",
)
HELDOUT39_TS = _edit(
    "heldout39-typescript", "uploadqueue.ts", "typescript",
    "Make `add` mark files over `maxFileSize` as failed with an error instead of throwing, and skip a file "
    "whose name is already queued or uploading; reset `sent` at the start of every attempt so `progress` never "
    "counts bytes twice, and leave cancelled and failed items out of `progress`; wait before requeueing a "
    "failed attempt with exponential backoff from a new `retryDelayMs` option (doubled each attempt); add "
    "`pause()` and `resume()` that stop `pump` from starting uploads without aborting running ones; add "
    "`clearFinished()` that drops done and cancelled items; make `cancel` a no-op for an item already "
    "cancelled or failed; and make `render` show `(attempt 2/3)` on retried items, the error on failed ones "
    "and a last line like `3/5 done, 42%` (`paused` appended while paused).",
)
HELDOUT39_NEW = _new(
    "heldout39-new-code",
    "Write a Python module `gitignore.py` that matches paths against .gitignore patterns: blank lines and `#` "
    "comments are skipped, `\\#` and `\\!` escape, trailing spaces are trimmed unless escaped, `!` negates, a "
    "trailing `/` matches directories only, a pattern with a `/` at its start or middle is anchored to the "
    "file's directory, `*`, `?`, `[a-z]` and `[!x]` never cross `/`, and `**/`, `/**` and `/**/` span "
    "directories; a `GitIgnore` class built from text with `matches(path, is_dir=False)` where the last "
    "matching pattern wins and a file under an ignored directory stays ignored; `GitIgnore.from_tree(root)` "
    "loading nested .gitignore files, each relative to its own directory; raise `ValueError` with the line "
    "number on a bad pattern such as an unclosed `[`; with docstrings and type hints, then pytest tests.",
)
HELDOUT39 = (HELDOUT39_PY, HELDOUT39_TS, HELDOUT39_NEW)
