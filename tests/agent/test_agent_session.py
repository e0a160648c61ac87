import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from agent_helpers import call, make_agent

from app.session import Session, SessionNotFound, list_sessions, load_session, sessions_dir
from engine.scripted import ScriptedEngine

REPO_ROOT = Path(__file__).resolve().parents[2]


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_session_file_records_messages_and_events(repo, state_dir):
    engine = ScriptedEngine([call("read_file", path="notes.txt"), "It has two lines."])
    agent, _ = make_agent(engine, repo)
    agent.run_turn("how many lines in notes.txt?")
    path = sessions_dir() / f"{agent.session_id}.jsonl"
    assert path.parent == state_dir / "sessions"
    recs = records(path)
    types = [r["type"] for r in recs]
    assert types[0] == "session" and recs[0]["workspace"] == str(repo) and recs[0]["model"] == "scripted"
    for t in ("session_start", "tool_call", "tool_result", "engine_stats", "assistant_message", "final"):
        assert t in types, t
    assert "assistant_delta" not in types  # streaming deltas are not stored
    assert all(r["final"] for r in recs if r["type"] == "engine_stats")
    assert recs[-1]["type"] == "final" and recs[-1]["status"] == "done"
    assert next(r for r in recs if r["type"] == "tool_result")["output"].count("line") >= 2
    messages, info = load_session(agent.session_id)
    assert messages == agent.messages
    assert info.title == "how many lines in notes.txt?" and info.messages == 3 and info.workspace == str(repo)


def test_session_survives_sigkill(repo, state_dir):
    script = textwrap.dedent(f"""
        import sys
        from app.agent import Agent
        from app.config import Config
        from app.events import AssistantDelta, ToolResultEvent
        from engine.scripted import ScriptedEngine
        from tools.permissions_types import approve_all
        from tools.registry import default_tools

        call = '<tool_call>{{"name": "read_file", "arguments": {{"path": "calc.py"}}}}</tool_call>'
        engine = ScriptedEngine([call, "slow answer " * 10000], delay=0.01)

        seen = []

        def on_event(ev):  # READY once the second reply streams: the tool result is on disk
            if isinstance(ev, ToolResultEvent):
                seen.append(ev)
            elif isinstance(ev, AssistantDelta) and seen and len(seen) < 2:
                seen.append(ev)
                print("READY", flush=True)

        agent = Agent(engine, {str(repo)!r}, config=Config(mode="auto-edit"), approver=approve_all,
                      on_event=on_event, tools=default_tools())
        print(agent.session_id, flush=True)
        agent.run_turn("explain calc.py")
    """)
    env = {**os.environ, "TAU_STATE_DIR": str(state_dir), "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    sid = proc.stdout.readline().strip()
    assert proc.stdout.readline().strip() == "READY"
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=10) == -signal.SIGKILL
    messages, info = load_session("latest")
    assert info.id == sid
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["tool_calls"][0]["function"]["arguments"] == {"path": "calc.py"}
    assert "return a - b" in messages[3]["content"]
    assert "final" not in [r["type"] for r in records(info.path)]
    # a line cut short by the kill is skipped, not fatal
    with open(info.path, "a") as f:
        f.write('{"type": "message", "message": {"role": "assi')
    assert load_session(sid)[0] == messages


def test_resume_continues_the_conversation(repo):
    engine = ScriptedEngine([call("read_file", path="calc.py"), "add() subtracts."])
    agent, _ = make_agent(engine, repo)
    agent.run_turn("what is wrong in calc.py?")
    agent.session.close()
    sid = agent.session_id

    session = Session.resume(sid[:12])
    engine2 = ScriptedEngine(["I told you: add() subtracts."])
    agent2, _ = make_agent(engine2, repo, session=session)
    assert agent2.session_id == sid
    assert [m["role"] for m in agent2.messages] == ["system", "user", "assistant", "tool", "assistant"]
    agent2.run_turn("say it again")
    assert "what is wrong in calc.py?" in engine2.prompts[0] and "add() subtracts." in engine2.prompts[0]
    messages, info = load_session(sid)
    assert messages[-1] == {"role": "assistant", "content": "I told you: add() subtracts."}
    assert info.messages == 5


def test_list_and_lookup(repo):
    assert list_sessions() == []
    with pytest.raises(SessionNotFound):
        load_session("latest")
    ids = []
    for text in ("first task", "second task"):
        agent, _ = make_agent(ScriptedEngine(["ok"]), repo)
        agent.run_turn(text)
        ids.append(agent.session_id)
        os.utime(agent.session.path, (1_000_000 + len(ids), 1_000_000 + len(ids)))
    infos = list_sessions()
    assert [i.id for i in infos] == ids[::-1] and infos[0].title == "second task"
    assert load_session()[1].id == ids[1]
    with pytest.raises(SessionNotFound):
        load_session("nope")
    with pytest.raises(SessionNotFound, match="several"):
        load_session(ids[0][:2])  # both ids share the date prefix
