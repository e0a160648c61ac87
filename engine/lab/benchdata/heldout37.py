"""The thirty-seventh held-out set (``--suite heldout37``), written at the start of the thirty-eighth round before its
first run: a Python edit, a TypeScript edit and new Python code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT37_PY = _edit(
    "heldout37-python", "vending.py", "python",
    "Make `select` refuse the sale and keep the credit when exact change cannot be given (give the coins back to "
    "the float untouched), and return the change smallest coin last; add `refill_all()` that fills every slot to "
    "capacity and returns how many items went in; make `restock` reject a negative count; add `set_price(code, "
    "price)` that refuses prices that are not a multiple of 5; add `sales_between(start, end)` and "
    "`revenue_by_product()`; make `best_sellers` break ties by product name; add a classmethod `load(path)` that "
    "reads what `save` writes; and make `report` mark sold-out slots with `SOLD OUT` instead of the count.",
)
HELDOUT37_TS = _edit(
    "heldout37-typescript", "seatmap.ts", "typescript",
    "Make holds expire: `hold` takes a `now` timestamp, a `holdMs` option (default 5 minutes) sets how long a "
    "hold lasts, and a `tick(now)` method releases expired holds; limit a customer to `maxPerCustomer` held "
    "seats (default 8); add `holdBlock(row, start, size, customer)` that holds adjacent seats or none of them; "
    "make `bestRow` prefer rows nearest the middle; add `cancel(id)` for booked seats that emits the change; "
    "make `render` print seat numbers above the rows and mark premium rows with `*`; and add `stats()` "
    "returning counts per state and the revenue of booked seats.",
)
HELDOUT37_NEW = _new(
    "heldout37-new-code",
    "Write a Python module `robotstxt.py` that parses robots.txt files: groups of `User-agent` lines with their "
    "`Allow` and `Disallow` rules, `*` and `$` wildcards in paths, `Crawl-delay` and `Sitemap` lines; a "
    "`RobotsTxt.parse(text)` classmethod; `can_fetch(agent, path)` where the longest matching rule wins and "
    "Allow wins a tie; `crawl_delay(agent)`; agent matching that is case-insensitive and falls back to `*`; "
    "comments and malformed lines ignored; with docstrings and type hints, then pytest tests.",
)
HELDOUT37 = (HELDOUT37_PY, HELDOUT37_TS, HELDOUT37_NEW)
