"""Finding 6: undo restores a file only while it still holds what the agent wrote; the user's
later work is kept (and reported), files the agent created go only while unchanged, and a
folder swapped for a symlink never leads undo outside the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.base import ToolContext
from tools.file_edit import EditFile, WriteFile
from tools.undo import UndoJournal


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("A = 1\nB = 2\n")
    return root


def _ctx(root: Path) -> tuple[ToolContext, UndoJournal]:
    journal = UndoJournal(root)
    return ToolContext(root=root, journal=journal), journal


def _edit(ctx: ToolContext, path: str, search: str, replace: str) -> None:
    result = EditFile().run({"path": path, "search": search, "replace": replace}, ctx)
    assert result.ok, result.output


def _write(ctx: ToolContext, path: str, content: str) -> None:
    result = WriteFile().run({"path": path, "content": content}, ctx)
    assert result.ok, result.output


def test_the_users_later_edit_of_an_agent_edited_file_is_kept(ws: Path) -> None:
    ctx, journal = _ctx(ws)
    journal.begin_turn()
    _edit(ctx, "app.py", "A = 1", "A = 10")
    (ws / "app.py").write_text("A = 10\nB = 2\nUSER = 'mine'\n")
    assert journal.undo() == []
    assert (ws / "app.py").read_text() == "A = 10\nB = 2\nUSER = 'mine'\n"
    assert journal.last_kept == ["app.py"]
    assert any("changed since the agent wrote it" in f for f in journal.last_failures)


def test_user_notes_in_a_file_the_agent_created_are_not_deleted(ws: Path) -> None:
    ctx, journal = _ctx(ws)
    journal.begin_turn()
    _write(ctx, "notes/todo.md", "- agent item\n")
    (ws / "notes" / "todo.md").write_text("- agent item\n- my own notes\n")
    journal.undo()
    assert (ws / "notes" / "todo.md").read_text() == "- agent item\n- my own notes\n"
    assert journal.last_kept == ["notes/todo.md"]


def test_a_save_between_two_agent_edits_of_one_turn_is_kept(ws: Path) -> None:
    ctx, journal = _ctx(ws)
    journal.begin_turn()
    _edit(ctx, "app.py", "A = 1", "A = 10")
    (ws / "app.py").write_text("A = 10\nB = 2\nSAVED = True\n")  # the user saves mid-turn
    _edit(ctx, "app.py", "B = 2", "B = 20")
    assert journal.undo() == ["app.py"]
    assert (ws / "app.py").read_text() == "A = 10\nB = 2\nSAVED = True\n"


def test_a_user_edit_across_two_turns_is_kept(ws: Path) -> None:
    ctx, journal = _ctx(ws)
    journal.begin_turn()
    _edit(ctx, "app.py", "A = 1", "A = 10")
    (ws / "app.py").write_text("A = 10\nB = 2\nUSER = 1\n")
    journal.begin_turn()
    _edit(ctx, "app.py", "B = 2", "B = 20")
    assert journal.undo() == ["app.py"]
    assert (ws / "app.py").read_text() == "A = 10\nB = 2\nUSER = 1\n"
    assert journal.undo() == []  # turn 1's edit is under the user's work now: kept
    assert (ws / "app.py").read_text() == "A = 10\nB = 2\nUSER = 1\n"
    assert journal.last_kept == ["app.py"]


def test_unchanged_agent_work_is_still_undone(ws: Path) -> None:
    ctx, journal = _ctx(ws)
    journal.begin_turn()
    _edit(ctx, "app.py", "A = 1", "A = 10")
    _write(ctx, "pkg/new.py", "X = 1\n")
    assert sorted(journal.undo()) == ["app.py", "pkg/new.py"]
    assert (ws / "app.py").read_text() == "A = 1\nB = 2\n"
    assert not (ws / "pkg").exists()


def test_undo_never_follows_a_folder_swapped_for_a_symlink(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    ctx, journal = _ctx(ws)
    journal.begin_turn()
    _write(ctx, "pkg/new.py", "X = 1\n")
    _edit(ctx, "app.py", "A = 1", "A = 10")
    (outside / "new.py").write_text("X = 1\n")  # the same bytes the agent wrote, outside
    (ws / "pkg" / "new.py").unlink()
    (ws / "pkg").rmdir()
    (ws / "pkg").symlink_to(outside, target_is_directory=True)
    journal.undo()
    assert (outside / "new.py").read_text() == "X = 1\n"
    assert (ws / "pkg").is_symlink()
    assert (ws / "app.py").read_text() == "A = 1\nB = 2\n"
    assert "pkg/new.py" in journal.last_kept
