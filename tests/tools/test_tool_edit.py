from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

from tools.base import ToolContext
from tools.file_edit import EditFile, WriteFile


def test_write_file_creates_file_and_parents(root: Path, ctx: ToolContext) -> None:
    result = WriteFile().run({"path": "pkg/sub/new.py", "content": "x = 1\n"}, ctx)
    assert result.ok, result.output
    assert result.output == "created pkg/sub/new.py (+1 -0)"
    assert result.paths == ("pkg/sub/new.py",)
    assert result.diff is not None and "+x = 1" in result.diff
    assert (root / "pkg" / "sub" / "new.py").read_text() == "x = 1\n"
    assert stat.S_IMODE((root / "pkg" / "sub" / "new.py").stat().st_mode) == 0o666 & ~_umask()


def test_write_file_rewrites_whole_file_keeping_crlf_bom_and_mode(root: Path, ctx: ToolContext) -> None:
    f = root / "win.txt"
    f.write_bytes(codecs.BOM_UTF8 + b"one\r\ntwo\r\n")
    os.chmod(f, 0o755)
    result = WriteFile().run({"path": "win.txt", "content": "uno\ndos\ntres\n"}, ctx)
    assert result.ok
    assert f.read_bytes() == codecs.BOM_UTF8 + b"uno\r\ndos\r\ntres\r\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o755


def test_edit_file_exact_keeps_crlf_and_mode(root: Path, ctx: ToolContext) -> None:
    f = root / "script.sh"
    f.write_bytes(b"#!/bin/sh\r\necho one\r\necho two\r\n")
    os.chmod(f, 0o700)
    result = EditFile().run({"path": "script.sh", "search": "echo two", "replace": "echo 2\necho 3"}, ctx)
    assert result.ok, result.output
    assert f.read_bytes() == b"#!/bin/sh\r\necho one\r\necho 2\r\necho 3\r\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o700
    assert result.diff is not None and "-echo two\n+echo 2\n+echo 3\n" in result.diff
    assert "\r" not in result.diff


def test_edit_file_with_crlf_in_the_search_text(root: Path, ctx: ToolContext) -> None:
    f = root / "w.txt"
    f.write_bytes(b"a\r\nb\r\nc\r\n")
    assert EditFile().run({"path": "w.txt", "search": "a\r\nb\r\n", "replace": "A\r\nB\r\n"}, ctx).ok
    assert f.read_bytes() == b"A\r\nB\r\nc\r\n"


def test_edit_file_keeps_latin1_and_refuses_unencodable(root: Path, ctx: ToolContext) -> None:
    f = root / "legacy.txt"
    f.write_bytes("caf\u00e9 = 1\n".encode("latin-1"))
    assert EditFile().run({"path": "legacy.txt", "search": "= 1", "replace": "= '\u00e0'"}, ctx).ok
    assert f.read_bytes() == "caf\u00e9 = '\u00e0'\n".encode("latin-1")
    bad = EditFile().run({"path": "legacy.txt", "search": "caf", "replace": "\u2192"}, ctx)
    assert not bad.ok and "latin-1" in bad.output
    assert f.read_bytes() == "caf\u00e9 = '\u00e0'\n".encode("latin-1")


def test_edit_file_fuzzy_success_shows_the_diff(root: Path, ctx: ToolContext) -> None:
    search = "def main():\n    print('helo')\n    return 0\n"  # typo: helo
    replace = "def main():\n    print('hello, world')\n    return 0\n"
    result = EditFile().run({"path": "src/app.py", "search": search, "replace": replace}, ctx)
    assert result.ok, result.output
    assert "similar" in result.output and "+    print('hello, world')" in result.output
    assert (root / "src" / "app.py").read_text() == replace


def test_edit_file_did_you_mean_leaves_file_alone(root: Path, ctx: ToolContext) -> None:
    before = (root / "src" / "app.py").read_text()
    result = EditFile().run(
        {"path": "src/app.py", "search": "def main(argv):\n    log('hello')\n", "replace": "x"}, ctx
    )
    assert not result.ok
    assert "Did you mean" in result.output and "    1| def main():" in result.output
    assert (root / "src" / "app.py").read_text() == before


def test_edit_file_ambiguous(root: Path, ctx: ToolContext) -> None:
    (root / "dup.py").write_text("x = 1\ny = 2\nx = 1\n")
    result = EditFile().run({"path": "dup.py", "search": "x = 1", "replace": "x = 9"}, ctx)
    assert not result.ok and "2 times" in result.output and "lines 1, 3" in result.output


def test_edit_file_errors(root: Path, ctx: ToolContext) -> None:
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    missing = EditFile().run({"path": "nope.py", "search": "a", "replace": "b"}, ctx)
    assert not missing.ok and "write_file" in missing.output
    binary = EditFile().run({"path": "img.png", "search": "PNG", "replace": "JPG"}, ctx)
    assert not binary.ok and "binary" in binary.output
    no_args = EditFile().run({"path": "src/app.py"}, ctx)
    assert not no_args.ok and "missing required argument 'search'" in no_args.output
    directory = WriteFile().run({"path": "src", "content": "x"}, ctx)
    assert not directory.ok and "directory" in directory.output


def test_unchanged_write_reports_no_changes(root: Path, ctx: ToolContext) -> None:
    result = WriteFile().run({"path": "README.md", "content": "# demo\n"}, ctx)
    assert result.ok and result.output.startswith("no changes")


def test_failed_edit_of_a_secret_file_quotes_nothing(root: Path, ctx: ToolContext) -> None:
    (root / ".env").write_text("API_KEY=sk-live-123\n")
    result = EditFile().run({"path": ".env", "search": "API_KEY=other-value", "replace": "x"}, ctx)
    assert not result.ok and "sk-live" not in result.output


def _umask() -> int:
    """The real umask (set and restored here, in the test, not in the code under test)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_edit_file_replace_all_and_occurrence(root: Path, ctx: ToolContext) -> None:
    f = root / "ren.py"
    f.write_text("def merge(a):\n    return merge(a)\n\nmerge(1)\n")
    ambiguous = EditFile().run({"path": "ren.py", "search": "merge", "replace": "deep_merge"}, ctx)
    assert not ambiguous.ok and "occurs 3 times" in ambiguous.output
    assert "    1| def merge(a):" in ambiguous.output and "    4| merge(1)" in ambiguous.output
    assert "replace_all" in ambiguous.output and "occurrence" in ambiguous.output
    one = EditFile().run({"path": "ren.py", "search": "merge", "replace": "m2", "occurrence": 3}, ctx)
    assert one.ok, one.output
    assert f.read_text() == "def merge(a):\n    return merge(a)\n\nm2(1)\n"
    every = EditFile().run({"path": "ren.py", "search": "merge", "replace": "deep_merge", "replace_all": True}, ctx)
    assert every.ok and "replaced all 2 occurrences" in every.output
    assert f.read_text() == "def deep_merge(a):\n    return deep_merge(a)\n\nm2(1)\n"
    too_far = EditFile().run({"path": "ren.py", "search": "deep_merge", "replace": "x", "occurrence": 5}, ctx)
    assert not too_far.ok and "occurs 2 time(s)" in too_far.output
    both = EditFile().run({"path": "ren.py", "search": "m2", "replace": "x", "occurrence": 1, "replace_all": True}, ctx)
    assert not both.ok and "not both" in both.output
    props = EditFile.parameters["properties"]
    assert props["replace_all"]["type"] == "boolean" and props["occurrence"]["type"] == "integer"


def test_an_edit_that_breaks_python_is_written_with_a_warning(root: Path, ctx: ToolContext) -> None:
    f = root / "m.py"
    f.write_text("def f():\n    return 1\n")
    result = EditFile().run({"path": "m.py", "search": "return 1", "replace": "return (1"}, ctx)
    assert result.ok and f.read_text() == "def f():\n    return (1\n"  # the model's call is done as asked
    assert result.output.splitlines()[1] == "warning: m.py no longer parses as Python (line 2: '(' was never closed)"
    # already broken, or not Python: nothing to warn about
    assert "warning" not in EditFile().run({"path": "m.py", "search": "return (1", "replace": "return ((1"}, ctx).output
    assert "warning" not in WriteFile().run({"path": "notes.txt", "content": "def f(:\n"}, ctx).output
    assert "no longer parses" in WriteFile().run({"path": "new.py", "content": "def f(:\n"}, ctx).output
