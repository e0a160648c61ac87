"""Finding 10: an empty SEARCH block in `tau edit` must not replace a whole existing file."""

from __future__ import annotations

from pathlib import Path

from app.agent.direct_edit import plan_edit
from engine.scripted import ScriptedEngine

BIG = "".join(f"line_{i} = {i}\n" for i in range(200))
EMPTY_SEARCH = "big.py\n<<<<<<< SEARCH\n=======\nx = 1\n>>>>>>> REPLACE\n"


def test_an_empty_search_block_does_not_wipe_the_file(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text(BIG)
    engine = ScriptedEngine([EMPTY_SEARCH, EMPTY_SEARCH])
    outcome = plan_edit(engine, tmp_path, ["big.py"], "set x", retries=1)
    assert outcome.changes == []  # nothing to apply: the file keeps its 200 lines
    assert outcome.failures and "empty SEARCH" in outcome.failures[0]
    assert (tmp_path / "big.py").read_text() == BIG


def test_an_empty_search_block_still_fills_an_empty_file(tmp_path: Path) -> None:
    (tmp_path / "new.py").write_text("")
    engine = ScriptedEngine([EMPTY_SEARCH.replace("big.py", "new.py")])
    outcome = plan_edit(engine, tmp_path, ["new.py"], "set x")
    assert [c.new for c in outcome.changes] == ["x = 1\n"] and outcome.failures == []
