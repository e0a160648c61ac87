"""`tau run`-style use: the agent loop attached to a running `tau serve` behaves exactly as in-process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from app.agent import Agent
from app.config import Config
from app.engines.remote import RemoteEngine
from app.events import AssistantDelta, EngineStatsEvent, SessionStarted, event_to_dict
from engine.scripted import ScriptedEngine
from tools.permissions_types import approve_all


def call(name: str, **args) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


REPLIES = [
    call("read_file", path="calc.py"),
    call("edit_file", path="calc.py", search="    return a - b", replace="    return a + b"),
    "Fixed add(): it subtracted instead of adding.",
]


def make_repo(root: Path) -> Path:
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-m", "i"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


def run_agent(engine, root: Path) -> list[dict]:
    events: list = []
    agent = Agent(engine, root, config=Config(mode="full-auto"), approver=approve_all, on_event=events.append)
    final = agent.run_turn("add() is wrong, fix it")
    agent.session.close()
    assert final.status == "done", final
    out = []
    for ev in events:
        if isinstance(ev, AssistantDelta | EngineStatsEvent | SessionStarted):
            continue  # streaming granularity, timings and session ids differ by nature
        out.append(json.loads(json.dumps(event_to_dict(ev), default=str).replace(str(root), "<root>")))
    return out


def test_agent_attached_to_tau_serve_matches_in_process(tmp_path, serve):
    local = ScriptedEngine(REPLIES)
    events_local = run_agent(local, make_repo(tmp_path / "a"))

    behind = ScriptedEngine(REPLIES)
    srv = serve(behind)
    remote = RemoteEngine(srv.url)
    events_remote = run_agent(remote, make_repo(tmp_path / "b"))
    remote.close()

    assert events_remote == events_local
    assert [e["type"] for e in events_local] == ["tool_call", "tool_result"] * 2 + ["assistant_message", "final"]
    assert (tmp_path / "b" / "calc.py").read_text() == (tmp_path / "a" / "calc.py").read_text()
    assert "return a + b" in (tmp_path / "b" / "calc.py").read_text()
    # the server's engine saw exactly the prompts the in-process engine saw
    norm = [p.replace(str(tmp_path / "b"), "<root>") for p in behind.prompts]
    assert norm == [p.replace(str(tmp_path / "a"), "<root>") for p in local.prompts]
    assert len(behind.prompts) == 3
    # and the drafter context the agent registered went through to the server's engine
    assert behind.contexts.keys() == local.contexts.keys() and behind.contexts
