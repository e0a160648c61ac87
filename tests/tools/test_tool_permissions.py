from __future__ import annotations

from pathlib import Path

import pytest

from tools.base import ToolContext
from tools.file_edit import EditFile, WriteFile
from tools.file_read import ReadFile
from tools.git_tools import GitCommit
from tools.permissions import Policy, needs_approval
from tools.permissions_types import MODES, ApprovalRequest, deny_all
from tools.secret_files import is_secret_path
from tools.shell import RunShell
from tools.undo import UndoJournal

EDIT = {"path": "src/app.py", "search": "return 0", "replace": "return 1"}
SHELL = {"command": "touch ran.txt"}


def _ctx(root: Path, policy: Policy) -> ToolContext:
    return ToolContext(root=root, policy=policy, journal=UndoJournal(root))


def test_mode_table() -> None:
    assert MODES == ("ask", "auto-edit", "full-auto")
    table = {m: (needs_approval(m, "edit"), needs_approval(m, "shell"), needs_approval(m, "read-secret")) for m in MODES}
    assert table == {
        "ask": (True, True, True),
        "auto-edit": (False, True, True),
        "full-auto": (False, False, True),
    }
    assert needs_approval("full-auto", "something-new")


def test_ask_mode_approved(root: Path, approver) -> None:
    a = approver(approve=True)
    ctx = _ctx(root, Policy("ask", a))
    assert EditFile().run(EDIT, ctx).ok
    assert RunShell().run(SHELL, ctx).ok
    assert "return 1" in (root / "src" / "app.py").read_text()
    assert (root / "ran.txt").exists()
    edit_req, shell_req = a.asked
    assert (edit_req.kind, edit_req.tool, edit_req.summary, edit_req.path) == ("edit", "edit_file", "edit src/app.py", "src/app.py")
    assert edit_req.diff is not None and "-    return 0\n+    return 1" in edit_req.diff
    assert (shell_req.kind, shell_req.command, shell_req.summary) == ("shell", "touch ran.txt", "run: touch ran.txt")


def test_ask_mode_rejected(root: Path, approver) -> None:
    ctx = _ctx(root, Policy("ask", approver(approve=False, note="not now")))
    before = (root / "src" / "app.py").read_text()
    for tool, args in ((EditFile(), EDIT), (WriteFile(), {"path": "n.txt", "content": "x"}), (RunShell(), SHELL)):
        result = tool.run(args, ctx)
        assert not result.ok and result.output == "rejected by user: not now"
    assert (root / "src" / "app.py").read_text() == before
    assert not (root / "n.txt").exists() and not (root / "ran.txt").exists()
    assert ctx.journal is not None and not ctx.journal.can_undo  # nothing recorded for rejected edits


def test_auto_edit_mode(root: Path, approver) -> None:
    a = approver(approve=False, note="no shell please")
    ctx = _ctx(root, Policy("auto-edit", a))
    assert EditFile().run(EDIT, ctx).ok
    shell = RunShell().run(SHELL, ctx)
    assert not shell.ok and shell.output == "rejected by user: no shell please"
    assert not (root / "ran.txt").exists()
    assert [r.kind for r in a.asked] == ["shell"]


def test_full_auto_mode_never_asks_for_edits_or_shell(root: Path, approver) -> None:
    a = approver(approve=False)
    ctx = _ctx(root, Policy("full-auto", a))
    assert EditFile().run(EDIT, ctx).ok
    assert RunShell().run(SHELL, ctx).ok
    assert GitCommit().run({"message": "auto"}, ctx).ok
    assert a.asked == []


def test_always_answer_is_remembered_per_kind(root: Path, approver) -> None:
    a = approver(approve=True, always=True)
    policy = Policy("ask", a)
    ctx = _ctx(root, policy)
    assert WriteFile().run({"path": "a.txt", "content": "1"}, ctx).ok
    assert WriteFile().run({"path": "b.txt", "content": "2"}, ctx).ok
    assert [r.kind for r in a.asked] == ["edit"]  # second edit did not ask
    assert policy.always_allowed == frozenset({"edit"})
    assert RunShell().run({"command": "true"}, ctx).ok
    assert [r.kind for r in a.asked] == ["edit", "shell"]  # shell is a different kind
    assert RunShell().run({"command": "true"}, ctx).ok
    assert len(a.asked) == 2
    policy.forget_always()
    assert WriteFile().run({"path": "c.txt", "content": "3"}, ctx).ok
    assert len(a.asked) == 3


def test_mode_is_settable_and_validated(approver) -> None:
    a = approver(approve=False)
    policy = Policy("ask", a)
    request = ApprovalRequest(kind="edit", tool="write_file", summary="edit x")
    assert not policy.check(request).approved
    policy.mode = "auto-edit"
    assert policy.mode == "auto-edit" and policy.check(request).approved
    with pytest.raises(ValueError, match="unknown permission mode"):
        policy.mode = "yolo"
    with pytest.raises(ValueError):
        Policy("never", a)
    assert Policy().mode == "ask" and not Policy().check(request).approved  # no approver: deny


@pytest.mark.parametrize(
    ("rel", "secret"),
    [
        (".env", True),
        (".env.production", True),
        ("config/prod.env", True),
        (".env.example", False),
        ("certs/server.pem", True),
        ("server.key", True),
        ("home/.ssh/id_rsa", True),
        ("id_ed25519.pub", True),
        (".netrc", True),
        ("credentials-prod.json", True),
        (".aws/credentials", True),
        ("src/app.py", False),
        ("keys.py", False),
        ("docs/environment.md", False),
    ],
)
def test_secret_paths(rel: str, secret: bool) -> None:
    assert is_secret_path(rel) is secret


@pytest.mark.parametrize("mode", MODES)
def test_secret_reads_ask_in_every_mode(root: Path, approver, mode: str) -> None:
    (root / ".env").write_text("API_KEY=abc123\n")
    yes = approver(approve=True)
    result = ReadFile().run({"path": ".env"}, _ctx(root, Policy(mode, yes)))
    assert result.ok and "API_KEY=abc123" in result.output
    assert [(r.kind, r.path, r.summary) for r in yes.asked] == [("read-secret", ".env", "read .env (may hold secrets)")]
    no = approver(approve=False, note="keep out")
    denied = ReadFile().run({"path": ".env"}, _ctx(root, Policy(mode, no)))
    assert not denied.ok and "abc123" not in denied.output
    assert denied.output.startswith("rejected by user: keep out")


def test_headless_full_auto_denies_secret_reads_clearly(root: Path) -> None:
    (root / "deploy.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    result = ReadFile().run({"path": "deploy.pem"}, _ctx(root, Policy("full-auto", deny_all)))
    assert not result.ok
    assert "PRIVATE" not in result.output
    assert "no approver available (headless run)" in result.output
    assert "may hold secrets" in result.output and "needs the user's approval" in result.output


def test_git_commit_asks_as_a_commit_in_auto_edit(root: Path, approver) -> None:
    a = approver(approve=False, note="I will commit myself")
    (root / "new.txt").write_text("x\n")
    result = GitCommit().run({"message": "add"}, _ctx(root, Policy("auto-edit", a)))
    assert not result.ok and result.output == "rejected by user: I will commit myself"
    assert [(r.kind, r.tool) for r in a.asked] == [("commit", "git_commit")]


def test_secret_behind_an_innocent_symlink_still_asks(root: Path, approver) -> None:
    (root / ".env").write_text("API_KEY=abc123\n")
    (root / "config.txt").symlink_to(root / ".env")
    no = approver(approve=False)
    result = ReadFile().run({"path": "config.txt"}, _ctx(root, Policy("full-auto", no)))
    assert not result.ok and "abc123" not in result.output
    assert [r.path for r in no.asked] == [".env"]
