"""The forty-first held-out set (``--suite heldout41``), written at the start of the forty-second round, before
its first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never
seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT41_PY = _edit(
    "heldout41-python", "pharmacy.py", "python",
    "Refuse a refill before 75% of the previous fill's supply is used, with a `days_supply` field on each "
    "prescription (default 30); let controlled medicines have no refills at all and expire 90 days after "
    "writing instead of 365; add `transfer(rx_id, other: Pharmacy)` that moves a prescription with its "
    "remaining refills and raises for controlled ones; add `reverse(rx_id, today)` that undoes the last fill "
    "on the same day, returns its units to stock and removes its sale; give `low_stock` a `reorder` dict of "
    "per-medicine thresholds; make `report` list each patient's active prescriptions with refills left and "
    "the next date a refill is allowed; and add a classmethod `load(path)` that reads what `save` writes.",
)
HELDOUT41_TS = _edit(
    "heldout41-typescript", "inlineedit.ts", "typescript",
    "Add a `validate?: (value: string) => string | null` option whose message shows in a `role=\"alert\"` "
    "element under the input and blocks saving; keep the input open with the error and the typed text when "
    "`onSave` rejects instead of only logging it; add `multiline?: boolean` that uses a textarea where "
    "Ctrl+Enter saves and Enter inserts a line break; add a `disabled` option and `setDisabled(flag)`; "
    "emit `inline-edit:change` CustomEvents with the old and new value after a save; keep an undo of the last "
    "saved value reachable with Ctrl+Z on the label; and remove every listener in `destroy`.",
)
HELDOUT41_NEW = _new(
    "heldout41-new-code",
    "Write a Python module `cidr.py` for IPv4 and IPv6 networks without the `ipaddress` module: parse "
    "addresses (IPv6 with `::` compression and an embedded IPv4 tail) into integers and format them back in "
    "canonical form (RFC 5952 for IPv6), a `Network` class parsed from CIDR text with `contains`, "
    "`overlaps`, `subnets(new_prefix)`, `supernet()` and iteration over hosts, `summarize(first, last)` "
    "that returns the fewest networks covering a range, and `collapse(networks)` that merges adjacent and "
    "overlapping ones; raise `ValueError` with the offending text on bad input; with docstrings, then "
    "pytest tests.",
)
HELDOUT41 = (HELDOUT41_PY, HELDOUT41_TS, HELDOUT41_NEW)
