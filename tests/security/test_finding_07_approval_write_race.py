"""Finding 7: the file written is the one approved. A parent folder swapped for a symlink
while the approval prompt is open (or just before the write) makes the write fail; nothing
lands outside the workspace."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tools.atomic import SymlinkSwapped, atomic_write
from tools.base import ToolContext
from tools.file_edit import EditFile, WriteFile
from tools.permissions import Policy
from tools.permissions_types import ApprovalDecision, ApprovalRequest


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("A = 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.py").write_text("A = 1\n")
    return root, outside


def _swapping_approver(root: Path, outside: Path):
    def approve(request: ApprovalRequest) -> ApprovalDecision:
        shutil.rmtree(root / "src")
        (root / "src").symlink_to(outside, target_is_directory=True)
        return ApprovalDecision(True)

    return approve


@pytest.mark.parametrize("call", [
    ("edit_file", {"path": "src/app.py", "search": "A = 1", "replace": "A = 'pwned'"}),
    ("write_file", {"path": "src/new.py", "content": "PWNED = 1\n"}),
])
def test_a_parent_swapped_during_approval_is_not_written_through(dirs, call) -> None:
    root, outside = dirs
    name, args = call
    tool = EditFile() if name == "edit_file" else WriteFile()
    ctx = ToolContext(root=root, policy=Policy("ask", _swapping_approver(root, outside)))
    result = tool.run(args, ctx)
    assert not result.ok
    assert (outside / "app.py").read_text() == "A = 1\n"
    assert not (outside / "new.py").exists()


def test_atomic_write_refuses_a_parent_that_became_a_symlink(dirs) -> None:
    root, outside = dirs
    target = (root / "src" / "app.py").resolve()
    shutil.rmtree(root / "src")
    (root / "src").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SymlinkSwapped):
        atomic_write(target, b"PWNED\n")
    assert (outside / "app.py").read_text() == "A = 1\n"
    assert [p.name for p in outside.iterdir()] == ["app.py"]  # no temporary file left either
