"""Finding 3: edit_file/write_file answer nothing about a secret file before the user approves
reading it (a no-op edit is not a yes/no oracle), and the agent never feeds a secret file's
text to the n-gram drafter."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from app.agent import Agent
from app.config import Config
from engine.scripted import ScriptedEngine
from tools.base import ToolContext
from tools.file_edit import EditFile, WriteFile
from tools.permissions import Policy
from tools.permissions_types import ApprovalDecision, ApprovalRequest, approve_all
from tools.registry import default_tools

SECRET = "API_KEY=sk-live-4242\n"


class Recorder:
    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        return ApprovalDecision(self.approve, note="" if self.approve else "no")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".env").write_text(SECRET)
    return root


@pytest.mark.parametrize("mode", ["ask", "auto-edit", "full-auto"])
def test_a_no_op_edit_of_a_secret_file_is_no_oracle(ws: Path, mode: str) -> None:
    answers = []
    for guess in ("API_KEY=sk-live-4", "API_KEY=sk-live-9", "NOPE"):
        rec = Recorder(approve=False)
        ctx = ToolContext(root=ws, policy=Policy(mode, rec))
        result = EditFile().run({"path": ".env", "search": guess, "replace": guess}, ctx)
        assert not result.ok
        assert [r.kind for r in rec.asked] == ["read-secret"]
        answers.append(result.output)
    assert len(set(answers)) == 1 and "sk-live" not in answers[0]
    whole = WriteFile().run({"path": ".env", "content": SECRET}, ToolContext(root=ws, policy=Policy("auto-edit", Recorder(False))))
    assert not whole.ok and "already has this content" not in whole.output
    assert (ws / ".env").read_text() == SECRET


def test_an_approved_secret_edit_still_works(ws: Path) -> None:
    rec = Recorder(approve=True)
    result = EditFile().run({"path": ".env", "search": "4242", "replace": "0000"}, ToolContext(root=ws, policy=Policy("ask", rec)))
    assert result.ok, result.output
    assert [r.kind for r in rec.asked] == ["read-secret", "edit"]
    assert (ws / ".env").read_text() == "API_KEY=sk-live-0000\n"


def test_the_agent_does_not_register_a_secret_file_with_the_drafter(ws: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TAU_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("TAU_CONFIG_DIR", str(tmp_path / "config"))
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "main.py").write_text("print(1)\n")

    def call(name: str, **arguments: str) -> str:
        return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"

    engine = ScriptedEngine([
        call("edit_file", path=".env", search="API_KEY", replace="API_KEY"),
        call("read_file", path=".env"),
        call("read_file", path="main.py"),
        "done",
    ])
    agent = Agent(engine, ws, config=Config(mode="auto-edit", max_steps=6), approver=approve_all,
                  on_event=lambda ev: None, tools=default_tools())
    agent.run_turn("go")
    assert "file:main.py" in engine.contexts
    assert not any("sk-live" in text for text in engine.contexts.values())
