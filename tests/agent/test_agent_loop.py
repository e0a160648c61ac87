import threading

from agent_helpers import Recorder, call, make_agent

from app.events import (
    AssistantDelta,
    AssistantMessage,
    EngineStatsEvent,
    Final,
    Notice,
    SessionStarted,
    ToolCallEvent,
    ToolResultEvent,
)
from engine.scripted import ScriptedEngine
from engine.types import CancelToken


def test_read_edit_test_answer(repo):
    engine = ScriptedEngine([
        call("read_file", path="calc.py"),
        call("edit_file", path="calc.py", search="    return a - b", replace="    return a + b"),
        call("run_shell", command="python -c 'import calc; assert calc.add(2, 3) == 5; print(\"ok\")'"),
        "Fixed add(): it subtracted instead of adding.",
    ])
    agent, rec = make_agent(engine, repo, mode="full-auto")
    final = agent.run_turn("add() is wrong, fix it")
    assert final == Final("done", "Fixed add(): it subtracted instead of adding.")
    assert "return a + b" in (repo / "calc.py").read_text()
    types = [type(e) for e in rec.events if not isinstance(e, AssistantDelta | EngineStatsEvent)]
    assert types == [SessionStarted] + [ToolCallEvent, ToolResultEvent] * 3 + [AssistantMessage, Final]
    results = rec.of(ToolResultEvent)
    assert all(r.ok for r in results), results
    assert results[1].diff and "+    return a + b" in results[1].diff
    assert results[2].exit_code == 0 and "ok" in results[2].output
    assert rec.of(EngineStatsEvent)[-1].final and rec.of(EngineStatsEvent)[-1].context_limit == 32768
    # the conversation in the model's native format
    roles = [m["role"] for m in agent.messages]
    assert roles == ["system", "user"] + ["assistant", "tool"] * 3 + ["assistant"]
    assert agent.messages[2]["tool_calls"][0]["function"] == {"name": "read_file", "arguments": {"path": "calc.py"}}
    assert "<tool_response>" in engine.prompts[1] and "return a - b" in engine.prompts[1]
    assert 0 < agent.context_tokens < agent.context_limit


def test_files_read_and_edited_feed_the_drafter(repo):
    engine = ScriptedEngine([
        call("read_file", path="notes.txt"),
        call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        "done",
    ])
    agent, _ = make_agent(engine, repo)
    assert "calc.py: def add, def mul" in engine.contexts["repomap"]
    agent.run_turn("go")
    assert engine.contexts["file:notes.txt"] == "first line\nsecond line\n"
    assert engine.contexts["file:calc.py"] == (repo / "calc.py").read_text()
    assert "a + b" in engine.contexts["file:calc.py"]


def test_malformed_call_gets_feedback_and_recovers(repo):
    engine = ScriptedEngine([
        "<tool_call>\nread_file('calc.py')\n</tool_call>",
        "<tool_call>{'name': 'read_file', 'arguments': {'path': 'calc.py'},}</tool_call>",  # repaired
        "<tool_call>{\"name\": \"open_file\", \"arguments\": {}}</tool_call>",
        call("read_file", path="notes.txt"),
        "All good.",
    ])
    agent, rec = make_agent(engine, repo)
    final = agent.run_turn("look around")
    assert final.status == "done" and final.message == "All good."
    assert "could not be used" in engine.prompts[1] and "not valid JSON" in engine.prompts[1]
    assert "unknown tool 'open_file'" in engine.prompts[3]
    notices = [n.message for n in rec.of(Notice)]
    assert notices[0].startswith("malformed tool call (1/3)") and notices[1].startswith("malformed tool call (1/3)")
    assert [r.ok for r in rec.of(ToolResultEvent)] == [True, True]


def test_three_malformed_calls_in_a_row_give_up(repo):
    engine = ScriptedEngine(["<tool_call>{bad</tool_call>"] * 3 + ["never used"])
    agent, rec = make_agent(engine, repo)
    final = agent.run_turn("do it")
    assert final.status == "failed" and "gave up after 3 malformed tool calls" in final.message
    assert engine.remaining == 1
    assert rec.events[-1] == final


def test_step_limit(repo):
    engine = ScriptedEngine([call("read_file", path="notes.txt")] * 5)
    agent, rec = make_agent(engine, repo, max_steps=3)
    final = agent.run_turn("loop forever")
    assert final.status == "limit" and "3 steps" in final.message
    assert len(rec.of(ToolResultEvent)) == 3 and engine.remaining == 2


def test_cancel_between_steps(repo):
    engine = ScriptedEngine([call("read_file", path="notes.txt"), "never reached"])
    cancel = CancelToken()

    def on_event(ev):
        rec(ev)
        if isinstance(ev, ToolResultEvent):
            cancel.cancel()

    rec = Recorder()
    agent, _ = make_agent(engine, repo, on_event=on_event)
    final = agent.run_turn("read", cancel)
    assert final.status == "cancelled" and engine.remaining == 1


def test_cancel_during_generation(repo):
    engine = ScriptedEngine(["word " * 2000], delay=0.005)
    agent, rec = make_agent(engine, repo)
    cancel = CancelToken()
    threading.Timer(0.1, cancel.cancel).start()
    final = agent.run_turn("write an essay", cancel)
    assert final.status == "cancelled"
    assert engine.requests[0].max_tokens >= 16
    assert 0 < len(rec.of(AssistantDelta)) < 500
    assert agent.messages[-1]["content"].startswith("word word") and agent.messages[-1]["content"].endswith("[interrupted by the user]")
    engine.add_reply("short answer")
    assert agent.run_turn("just say it").status == "done"  # the agent stays usable after a cancel


def test_engine_error_is_a_failed_turn_not_an_exception(repo):
    engine = ScriptedEngine([])  # no replies: the engine reports an error
    agent, _ = make_agent(engine, repo)
    final = agent.run_turn("hi")
    assert final.status == "failed" and "engine error" in final.message


def test_headless_auto_edit_denies_shell_full_auto_runs_it(repo):
    from tools.permissions_types import deny_all

    engine = ScriptedEngine([call("run_shell", command="echo hi > made.txt"), "could not run it"])
    agent, rec = make_agent(engine, repo, mode="auto-edit", approver=deny_all)
    assert agent.run_turn("run it").status == "done"
    res = rec.of(ToolResultEvent)[0]
    assert not res.ok and "rejected" in res.output and not (repo / "made.txt").exists()
    agent.mode = "full-auto"
    assert agent.mode == "full-auto" and agent.policy.mode == "full-auto"
    engine.add_reply(call("run_shell", command="echo hi > made.txt"))
    engine.add_reply("ran it")
    agent.run_turn("now run it")
    assert (repo / "made.txt").read_text() == "hi\n"


def test_clear_and_compact(repo):
    engine = ScriptedEngine([call("read_file", path="calc.py"), "read it", "- the user asked to read calc.py"])
    agent, rec = make_agent(engine, repo)
    agent.run_turn("read calc.py")
    n = len(agent.messages)
    agent.compact()
    assert len(agent.messages) < n and "the user asked to read calc.py" in agent.messages[1]["content"]
    assert "Summarize" not in agent.messages[0]["content"] and "summarize a coding session" in engine.prompts[-1]
    assert any("compacted" in e.message for e in rec.of(Notice))
    agent.clear()
    assert [m["role"] for m in agent.messages] == ["system"]


def test_files_named_by_the_user_are_attached_and_drafted(repo):
    engine = ScriptedEngine(["It subtracts."])
    agent, _ = make_agent(engine, repo)
    agent.run_turn("what does add in calc.py do?")
    assert "def add(a, b):\n    return a - b" in agent.messages[1]["content"]
    assert "return a - b" in engine.prompts[0]
    assert engine.contexts["file:calc.py"] == (repo / "calc.py").read_text()
