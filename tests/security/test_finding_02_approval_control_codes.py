"""Finding 2: an approval shows control characters as visible escapes, so terminal codes in a
command, summary, path or diff cannot rewrite what the user is asked to approve."""

from __future__ import annotations

from pathlib import Path

from tools.base import ToolContext
from tools.file_edit import EditFile, WriteFile
from tools.permissions import Policy
from tools.permissions_types import ApprovalDecision, ApprovalRequest
from tools.shell import RunShell
from tools.visible import visible, visible_line


class Recorder:
    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        return ApprovalDecision(False, note="no")


def _ctx(root: Path, rec: Recorder) -> ToolContext:
    return ToolContext(root=root, policy=Policy("ask", rec))


def _raw_controls(text: str | None) -> list[str]:
    return [c for c in text or "" if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F
            or 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069]


def test_a_shell_command_cannot_erase_its_own_summary(tmp_path: Path) -> None:
    rec = Recorder()
    result = RunShell().run({"command": "touch X; \x1b[2K\x1b[Grun: pytest -q"}, _ctx(tmp_path, rec))
    assert not result.ok and not (tmp_path / "X").exists()
    (req,) = rec.asked
    assert req.summary == "run: touch X; \\x1b[2K\\x1b[Grun: pytest -q"
    assert req.command == "touch X; \\x1b[2K\\x1b[Grun: pytest -q"
    assert _raw_controls(req.summary) == [] and _raw_controls(req.command) == []


def test_edit_paths_and_diffs_show_their_control_codes(tmp_path: Path) -> None:
    rec = Recorder()
    name = "a\u202egpj.py"  # right-to-left override: shows as "ayp.jpg"
    WriteFile().run({"path": name, "content": "ok = 1\x1b[1A\x1b[2K\n"}, _ctx(tmp_path, rec))
    (tmp_path / "b.py").write_text("x = 1\n")
    EditFile().run({"path": "b.py", "search": "x = 1", "replace": "x = 2\x9b2K"}, _ctx(tmp_path, rec))
    assert len(rec.asked) == 2
    for req in rec.asked:
        for text in (req.summary, req.path, req.diff, req.tool):
            assert _raw_controls(text) == [], text
    assert "\\u202e" in (rec.asked[0].path or "") and "\\x1b[1A" in (rec.asked[0].diff or "")
    assert "\\x9b2K" in (rec.asked[1].diff or "")


def test_visible_keeps_newlines_and_tabs_and_plain_text() -> None:
    assert visible("a\tb\nc é ✓") == "a\tb\nc é ✓"
    assert visible("\x00\x07\x7f\u2066\ud800") == "\\x00\\x07\\x7f\\u2066\\ud800"
    assert visible_line("one\ntwo\r") == "one\\x0atwo\\x0d"
