from __future__ import annotations

from pathlib import Path

from tools.base import ToolContext
from tools.file_read import MAX_READ_CHARS, ReadFile


def test_read_whole_file(ctx: ToolContext) -> None:
    result = ReadFile().run({"path": "src/app.py"}, ctx)
    assert result.ok
    assert result.output == "src/app.py (3 lines)\ndef main():\n    print('hello')\n    return 0"
    assert result.paths == ("src/app.py",)


def test_read_line_range(root: Path, ctx: ToolContext) -> None:
    (root / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    result = ReadFile().run({"path": "n.txt", "start_line": 10, "end_line": 12}, ctx)
    assert result.output == "n.txt (lines 10-12 of 100)\nline 10\nline 11\nline 12"
    tail = ReadFile().run({"path": "n.txt", "start_line": "99"}, ctx)  # numbers as strings are fine
    assert tail.output == "n.txt (lines 99-100 of 100)\nline 99\nline 100"
    past = ReadFile().run({"path": "n.txt", "start_line": 500}, ctx)
    assert not past.ok and "past the end" in past.output and "100 lines" in past.output
    bad = ReadFile().run({"path": "n.txt", "start_line": "ten"}, ctx)
    assert not bad.ok and "integer" in bad.output


def test_read_is_size_capped_with_a_continuation_hint(root: Path, ctx: ToolContext) -> None:
    line = "x" * 99
    (root / "big.txt").write_text((line + "\n") * 2000)  # 200 kB
    result = ReadFile().run({"path": "big.txt"}, ctx)
    assert result.ok
    assert len(result.output) < MAX_READ_CHARS + 200
    shown = MAX_READ_CHARS // 100
    assert f"(lines 1-{shown} of 2000)" in result.output
    assert result.output.endswith(f"[truncated; continue with start_line={shown + 1}]")


def test_binary_file_refused(root: Path, ctx: ToolContext) -> None:
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    result = ReadFile().run({"path": "logo.png"}, ctx)
    assert not result.ok
    assert result.output == "logo.png is a binary file (264 bytes); read_file only shows text files"


def test_missing_file_directory_and_empty_file(root: Path, ctx: ToolContext) -> None:
    assert ReadFile().run({"path": "nope.txt"}, ctx).output == "file not found: nope.txt"
    assert "is a directory" in ReadFile().run({"path": "src"}, ctx).output
    (root / "empty.txt").write_text("")
    assert ReadFile().run({"path": "empty.txt"}, ctx).output == "empty.txt (empty file)"
    assert "missing required argument 'path'" in ReadFile().run({}, ctx).output


def test_latin1_and_crlf_files_read_as_text(root: Path, ctx: ToolContext) -> None:
    (root / "l.txt").write_bytes(b"caf\xe9\r\nbar\r\n")
    assert ReadFile().run({"path": "l.txt"}, ctx).output == "l.txt (2 lines)\ncaf\u00e9\nbar"


def test_missing_file_suggests_similar_paths(ctx: ToolContext) -> None:
    assert ReadFile().run({"path": "app.py"}, ctx).output == "file not found: app.py; did you mean: src/app.py?"
    assert ReadFile().run({"path": "src/ap.py"}, ctx).output.endswith("did you mean: src/app.py?")


def test_fifo_is_refused_instead_of_blocking(root: Path, ctx: ToolContext) -> None:
    import os

    os.mkfifo(root / "pipe")
    result = ReadFile().run({"path": "pipe"}, ctx)
    assert not result.ok and "not a regular file" in result.output
    from tools.file_search import Grep

    assert Grep().run({"pattern": "x"}, ctx).ok  # the walk skips it too
