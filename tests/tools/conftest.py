"""Fixtures: a temporary git repository as the workspace, and scripted approvers."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import git
import pytest

from engine.types import CancelToken
from tools.base import ToolContext
from tools.permissions import Policy
from tools.permissions_types import ApprovalDecision, ApprovalRequest
from tools.undo import UndoJournal


@dataclass
class ScriptedApprover:
    """Answers every request the same way and remembers what it was asked."""

    approve: bool = True
    always: bool = False
    note: str = ""
    asked: list[ApprovalRequest] = field(default_factory=list)

    def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        return ApprovalDecision(self.approve, always=self.always, note=self.note)


@pytest.fixture(scope="session")
def _template_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One committed repository per session; each test gets a fresh copy (fast)."""
    root = tmp_path_factory.mktemp("template") / "ws"
    root.mkdir()
    r = git.Repo.init(root)
    with r.config_writer() as cw:
        cw.set_value("user", "name", "Test User")
        cw.set_value("user", "email", "test@example.com")
        cw.set_value("commit", "gpgsign", "false")
    (root / "README.md").write_text("# demo\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    print('hello')\n    return 0\n")
    r.index.add(["README.md", "src/app.py"])
    r.index.commit("initial")
    r.close()
    return root


@pytest.fixture
def repo(tmp_path: Path, _template_repo: Path) -> git.Repo:
    """A git repository (README.md and src/app.py committed) at tmp_path/ws."""
    root = tmp_path / "ws"
    shutil.copytree(_template_repo, root, symlinks=True)
    return git.Repo(root)


@pytest.fixture
def root(repo: git.Repo) -> Path:
    return Path(repo.working_tree_dir or "").resolve()


def make_ctx(
    root: Path,
    mode: str | None = None,
    approver: ScriptedApprover | None = None,
    journal: UndoJournal | None = None,
    cancel: CancelToken | None = None,
) -> ToolContext:
    policy = Policy(mode, approver or ScriptedApprover()) if mode is not None else None
    return ToolContext(root=root, policy=policy, journal=journal, cancel=cancel)


@pytest.fixture(name="make_ctx")
def make_ctx_fixture() -> Callable[..., ToolContext]:
    return make_ctx


@pytest.fixture(name="approver")
def approver_fixture() -> type[ScriptedApprover]:
    return ScriptedApprover


@pytest.fixture
def ctx(root: Path) -> ToolContext:
    """Everything allowed (no policy), with an undo journal."""
    return make_ctx(root, journal=UndoJournal(root))
