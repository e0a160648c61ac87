"""Finding 11 (tools): symlink loops, lone surrogates and NUL bytes give a clear one-line error
or a skipped entry, never an exception; grep honours cancellation and stops a catastrophic
pattern on a file after its time limit."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from engine.types import CancelToken
from tools.base import ToolContext
from tools.file_edit import EditFile, WriteFile
from tools.file_read import ReadFile
from tools.file_search import Grep, ListFiles
from tools.git_tools import GitCommit
from tools.shell import RunShell
from tools.toolkit import BaseTool


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("needle = 1\n")
    (root / "loop").symlink_to(root / "loop")  # a self-looping symlink at the root
    (root / "src" / "l1").symlink_to(root / "src" / "l2")
    (root / "src" / "l2").symlink_to(root / "src" / "l1")
    return root


def test_a_symlink_loop_does_not_break_grep_or_list_files(ws: Path) -> None:
    ctx = ToolContext(root=ws)
    listed = ListFiles().run({}, ctx)
    assert listed.ok and listed.output.splitlines() == ["src/a.py"]
    found = Grep().run({"pattern": "needle"}, ctx)
    assert found.ok and "src/a.py:1: needle = 1" in found.output


@pytest.mark.parametrize("tool,args", [
    (ReadFile(), {"path": "loop"}),
    (WriteFile(), {"path": "loop/x.py", "content": "x"}),
    (EditFile(), {"path": "src/l1", "search": "a", "replace": "b"}),
    (ListFiles(), {"path": "loop"}),
    (ReadFile(), {"path": "src/\ud800.py"}),
    (WriteFile(), {"path": "ok.py", "content": "bad \udcff"}),
    (ReadFile(), {"path": "src/a\x00.py"}),
    (RunShell(), {"command": "echo a\x00b"}),
    (RunShell(), {"command": "echo \ud800"}),
])
def test_bad_paths_and_text_give_one_line_errors(ws: Path, tool: BaseTool, args: dict) -> None:
    result = tool.run(args, ToolContext(root=ws))
    assert not result.ok
    assert "\n" not in result.output and result.output


def test_a_commit_message_with_a_nul_or_surrogate_is_refused(ws: Path) -> None:
    for message in ("fix\x00", "fix \ud800"):
        result = GitCommit().run({"message": message}, ToolContext(root=ws))
        assert not result.ok and "\n" not in result.output


def test_unexpected_errors_inside_a_tool_become_results() -> None:
    class Broken(BaseTool):
        name = "broken"

        def _run(self, args, ctx):
            raise RuntimeError("Symlink loop from '/x'")

    result = Broken().run({}, ToolContext(root=Path("/")))
    assert not result.ok and result.output == "broken failed: Symlink loop from '/x'"


def test_grep_stops_a_catastrophic_pattern_per_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tools.file_search as fs

    monkeypatch.setattr(fs, "GREP_FILE_SECONDS", 0.3)
    (tmp_path / "a.txt").write_text("a" * 40 + "\n")
    (tmp_path / "b.txt").write_text("needle\n")
    t0 = time.monotonic()
    result = Grep().run({"pattern": r"(.*){1,32000}[bc]|needle"}, ToolContext(root=tmp_path))
    assert time.monotonic() - t0 < 5
    assert result.ok and "b.txt:1: needle" in result.output
    assert "was stopped there (first at a.txt:1)" in result.output


def test_the_audits_pattern_finishes_quickly(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("aaaa bbbb cccc dddd eeee ffff!\n")
    t0 = time.monotonic()
    result = Grep().run({"pattern": r"^(\w+\s?)*$"}, ToolContext(root=tmp_path))
    assert result.ok and time.monotonic() - t0 < 5


def test_grep_honours_the_cancel_token(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"f{i:02}.txt").write_text("needle\n")
    token = CancelToken()
    token.cancel()
    result = Grep().run({"pattern": "needle"}, ToolContext(root=tmp_path, cancel=token))
    assert "cancelled" in result.output and "f49.txt" not in result.output
