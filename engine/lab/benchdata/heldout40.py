"""The fortieth held-out set (``--suite heldout40``), written in the forty-first round before its first run: a
Python edit, a Go edit and new TypeScript code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT40_PY = _edit(
    "heldout40-python", "tickets.py", "python",
    "Make `hold` expire stale holds first (pass `now` through) so expired holds never block a sale, and let "
    "`buy` raise `KeyError('hold expired')` for a hold whose time is up; give each tier an optional "
    "`per_customer` limit that `buy` enforces over the customer's orders that are not refunded; add "
    "`partial_refund(order_id, quantity)` that returns part of an order's tickets to its tier and the matching "
    "amount; refuse refunds less than 24 hours before the event starts unless `force=True`; add "
    "`waitlist(tier, customer)` and make `refund` and `expire` return the freed seats as holds for the people "
    "waiting, oldest first; make `report` show held seats beside sold ones and the refunded total; and add a "
    "classmethod `load(path)` that reads what `save` writes.",
)
HELDOUT40_GO = _edit(
    "heldout40-go", "leaderboard.go", "go",
    "Keep a time-stamped history of each player's scores and add `TopSince(n int, since time.Time) []Entry` "
    "that ranks by the best score submitted at or after `since`; make ties share a rank in `Rank` (two players "
    "on 90 both 2nd, the next 4th) and show it in `Render` as `2=`; add `SubmitBatch(scores map[string]int) "
    "error` that checks every score before recording any; cap the board at a `MaxPlayers` field (0: no cap) by "
    "dropping the lowest best score when a new player arrives; add `Percentile(player string) (float64, error)` "
    "and a `Merge(other *Board)` that keeps each player's best and sums totals and games, locking both boards "
    "in a fixed order so two merges cannot deadlock.",
)
HELDOUT40_NEW = _new(
    "heldout40-new-code",
    "Write a TypeScript module `csvparse.ts` that parses CSV text per RFC 4180: fields separated by a "
    "configurable delimiter, quoted fields with doubled quotes inside, line breaks inside quotes, CRLF or LF "
    "records, an optional header row that turns records into objects, `trim` and `skipEmptyLines` options, a "
    "`columns` option that converts named fields with `number`, `boolean` or `date` casts, and errors that "
    "name the line and column of an unclosed quote or a record with the wrong field count (unless "
    "`relaxColumnCount`); export `parse(text, options)` and a streaming `CsvParser` class whose `push(chunk)` "
    "returns complete records and `end()` returns the rest; with JSDoc comments, then vitest tests.",
)
HELDOUT40 = (HELDOUT40_PY, HELDOUT40_GO, HELDOUT40_NEW)
