from __future__ import annotations

import os
import stat
from pathlib import Path

from tools.base import ToolContext
from tools.file_edit import EditFile, WriteFile
from tools.undo import UndoJournal


def _edit(ctx: ToolContext, path: str, search: str, replace: str) -> None:
    result = EditFile().run({"path": path, "search": search, "replace": replace}, ctx)
    assert result.ok, result.output


def _write(ctx: ToolContext, path: str, content: str) -> None:
    result = WriteFile().run({"path": path, "content": content}, ctx)
    assert result.ok, result.output


def test_undo_restores_only_the_last_turn_and_leaves_user_work_alone(root: Path, make_ctx) -> None:
    journal = UndoJournal(root)
    ctx = make_ctx(root, journal=journal)
    app = root / "src" / "app.py"
    original_app = app.read_text()
    original_readme = (root / "README.md").read_text()

    journal.begin_turn()  # turn 1: two edits of one file and a new file
    _edit(ctx, "src/app.py", "print('hello')", "print('turn 1')")
    _edit(ctx, "src/app.py", "return 0", "return 1")
    _write(ctx, "src/helper.py", "HELP = 1\n")
    after_turn1 = app.read_text()

    journal.begin_turn()  # turn 2: edit again, rewrite README, create files in new directories
    _edit(ctx, "src/app.py", "return 1", "return 2")
    _write(ctx, "README.md", "# rewritten\n")
    _write(ctx, "pkg/deep/mod.py", "X = 2\n")
    _write(ctx, "src/helper.py", "HELP = 2\n")

    # the user's own uncommitted work, in files the agent did not touch
    (root / "notes.txt").write_text("my notes\n")
    (root / "src" / "mine.py").write_text("# mine\n")

    assert journal.can_undo
    assert journal.pending() == ["src/app.py", "README.md", "pkg/deep/mod.py", "src/helper.py"]
    assert sorted(journal.undo()) == ["README.md", "pkg/deep/mod.py", "src/app.py", "src/helper.py"]
    assert app.read_text() == after_turn1
    assert (root / "README.md").read_text() == original_readme
    assert (root / "src" / "helper.py").read_text() == "HELP = 1\n"
    assert not (root / "pkg").exists()  # created directories are removed again
    assert (root / "notes.txt").read_text() == "my notes\n"
    assert (root / "src" / "mine.py").read_text() == "# mine\n"

    assert sorted(journal.undo()) == ["src/app.py", "src/helper.py"]  # then turn 1
    assert app.read_text() == original_app
    assert not (root / "src" / "helper.py").exists()
    assert (root / "src" / "mine.py").exists() and (root / "notes.txt").exists()
    assert not journal.can_undo and journal.undo() == []


def test_undo_restores_mode_and_bytes(root: Path) -> None:
    f = root / "run.sh"
    f.write_bytes(b"#!/bin/sh\r\necho hi\r\n")
    os.chmod(f, 0o755)
    journal = UndoJournal(root)
    journal.begin_turn()
    journal.record(f)
    f.write_text("changed")
    journal.wrote(f, b"changed")  # what the agent wrote: undo restores only while the file holds it
    os.chmod(f, 0o600)
    journal.record(f)  # a second record in the same turn keeps the first pre-image
    assert journal.undo() == ["run.sh"]
    assert f.read_bytes() == b"#!/bin/sh\r\necho hi\r\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o755


def test_empty_turns_are_skipped(root: Path, make_ctx) -> None:
    journal = UndoJournal(root)
    ctx = make_ctx(root, journal=journal)
    journal.begin_turn()
    _write(ctx, "a.txt", "a")
    journal.begin_turn()  # a turn that only talked
    journal.begin_turn()
    assert journal.can_undo
    assert journal.undo() == ["a.txt"]
    assert not (root / "a.txt").exists()


def test_created_directory_with_user_files_is_kept(root: Path, make_ctx) -> None:
    journal = UndoJournal(root)
    ctx = make_ctx(root, journal=journal)
    journal.begin_turn()
    _write(ctx, "out/gen.txt", "g")
    (root / "out" / "user.txt").write_text("u")
    journal.undo()
    assert not (root / "out" / "gen.txt").exists()
    assert (root / "out" / "user.txt").read_text() == "u"


def test_record_ignores_paths_outside_the_root(root: Path, tmp_path: Path) -> None:
    journal = UndoJournal(root)
    journal.record(tmp_path / "elsewhere.txt")
    assert not journal.can_undo


def test_undo_keeps_the_users_uncommitted_work_in_an_edited_file(root: Path, make_ctx) -> None:
    journal = UndoJournal(root)
    ctx = make_ctx(root, journal=journal)
    (root / "README.md").write_text("# demo\nuser's uncommitted line\n")
    journal.begin_turn()
    _edit(ctx, "README.md", "# demo", "# agent title")
    assert journal.undo() == ["README.md"]
    assert (root / "README.md").read_text() == "# demo\nuser's uncommitted line\n"


def test_a_failed_restore_stays_undoable(root: Path, make_ctx) -> None:
    journal = UndoJournal(root)
    ctx = make_ctx(root, journal=journal)
    journal.begin_turn()
    _write(ctx, "gen/a.txt", "new")
    _edit(ctx, "README.md", "# demo", "# changed")
    (root / "gen" / "a.txt").unlink()  # meanwhile a directory took the file's place
    (root / "gen" / "a.txt").mkdir()
    (root / "gen" / "a.txt" / "keep").write_text("k")
    assert journal.undo() == ["README.md"]
    assert (root / "README.md").read_text() == "# demo\n"
    assert len(journal.last_failures) == 1 and journal.last_failures[0].startswith("gen/a.txt:")
    assert journal.can_undo and journal.pending() == ["gen/a.txt"]
    (root / "gen" / "a.txt" / "keep").unlink()
    (root / "gen" / "a.txt").rmdir()
    assert journal.undo() == ["gen/a.txt"] and journal.last_failures == []
    assert not (root / "gen").exists()


def test_the_report_names_each_kept_file_why_and_a_capped_hint(root: Path, make_ctx) -> None:
    journal = UndoJournal(root)
    ctx = make_ctx(root, journal=journal)
    journal.begin_turn()
    _write(ctx, "a.txt", "one\ntwo\n")
    _write(ctx, "b.txt", "b\n")
    _write(ctx, "c.txt", "c\n")
    _edit(ctx, "README.md", "# demo", "# agent")
    (root / "a.txt").write_text("one\nTWO \x1b[2K\n" + "".join(f"user {i}\n" for i in range(20)))
    (root / "README.md").unlink()
    (root / "c.txt").write_bytes(b"\xff\xfe not text")
    report = journal.undo_report()
    assert report.restored == ("b.txt",) and not (root / "b.txt").exists()
    assert [(k.path, k.why) for k in report.kept] == [("a.txt", "changed"), ("c.txt", "changed"), ("README.md", "deleted")]
    hint = report.kept[0].hint.splitlines()
    assert hint[:3] == ["@@ -2 +2,21 @@", "-two", "+TWO \\x1b[2K"]  # a control code is shown, not obeyed
    assert len(hint) == 9 and hint[-1] == "... 15 more diff lines"
    assert report.kept[1].hint == "" and report.kept[2].hint == ""  # not text; gone
    assert journal.last == report and journal.last_kept == ["a.txt", "c.txt", "README.md"]
    assert (root / "a.txt").read_text().endswith("user 19\n") and not (root / "README.md").exists()


def test_a_big_write_keeps_only_its_hash(root: Path, make_ctx) -> None:
    journal = UndoJournal(root)
    ctx = make_ctx(root, journal=journal)
    journal.begin_turn()
    _write(ctx, "big.txt", "x" * 70_000 + "\n")
    (root / "big.txt").write_text("x" * 70_000 + "\nmine\n")
    report = journal.undo_report()
    assert [(k.path, k.why, k.hint) for k in report.kept] == [("big.txt", "changed", "")]
    assert (root / "big.txt").read_text().endswith("mine\n")
