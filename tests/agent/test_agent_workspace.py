import json

from agent_helpers import call, git, make_agent

from app.events import Final, ToolResultEvent
from engine.scripted import ScriptedEngine


def test_undo_restores_last_turn_and_keeps_user_changes(repo):
    # the user has uncommitted work before the agent starts
    (repo / "notes.txt").write_text("first line\nsecond line\nuser's own line\n")
    (repo / "calc.py").write_text((repo / "calc.py").read_text() + "\n# user comment\n")
    user_calc = (repo / "calc.py").read_text()
    engine = ScriptedEngine([
        call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        call("edit_file", path="calc.py", search="return a * b", replace="return b * a"),
        call("write_file", path="pkg/new.py", content="X = 1\n"),
        "three edits done",
    ])
    agent, rec = make_agent(engine, repo)
    assert agent.run_turn("edit").status == "done"
    assert all(r.ok for r in rec.of(ToolResultEvent))
    assert "return b * a" in (repo / "calc.py").read_text() and (repo / "pkg/new.py").exists()
    # the user edits another file while the agent's changes are in place
    (repo / "notes.txt").write_text("first line\nsecond line\nuser's own line\nand another\n")
    diff = agent.diff()
    assert "+    return a + b" in diff and "+# user comment" in diff and "+X = 1" in diff and "+and another" in diff
    restored = agent.undo().restored
    assert sorted(restored) == ["calc.py", "pkg/new.py"]
    assert (repo / "calc.py").read_text() == user_calc
    assert not (repo / "pkg").exists()
    assert (repo / "notes.txt").read_text().endswith("and another\n")
    assert agent.undo().restored == ()


def test_undo_is_per_turn(repo):
    engine = ScriptedEngine([
        call("edit_file", path="calc.py", search="return a - b", replace="return a + b"), "one",
        call("edit_file", path="calc.py", search="return a * b", replace="return a ** b"), "two",
    ])
    agent, _ = make_agent(engine, repo)
    agent.run_turn("first")
    after_first = (repo / "calc.py").read_text()
    agent.run_turn("second")
    assert agent.undo().restored == ("calc.py",)
    assert (repo / "calc.py").read_text() == after_first
    assert agent.undo().restored == ("calc.py",)
    assert git(repo, "status", "--porcelain") == ""


def test_diff_outside_git_shows_agent_edits(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "a.txt").write_text("old\n")
    engine = ScriptedEngine([call("write_file", path="a.txt", content="new\n"), "ok"])
    agent, _ = make_agent(engine, root)
    agent.run_turn("change")
    d = agent.diff()
    assert "--- a/a.txt" in d and "-old" in d and "+new" in d


def test_context_budget_never_overflows(repo):
    n_ctx = 2048
    (repo / "big.txt").write_text("".join(f"line {i}: " + "lorem ipsum dolor sit amet " * 3 + "\n" for i in range(400)))
    over = []

    def checked(reply):
        def fn(prompt):
            if engine.count_tokens(prompt) + engine.requests[-1].max_tokens > n_ctx:
                over.append(len(prompt))
            return reply(prompt) if callable(reply) else reply
        return fn

    reads = []

    def answer(prompt):
        if "summarize a coding session" in prompt:
            return "- read big.txt several times"
        reads.append(prompt)
        return call("read_file", path="big.txt", start_line=1, end_line=120) if len(reads) <= 12 else "finished reading"

    engine = ScriptedEngine(n_ctx=n_ctx)
    for _ in range(40):  # 12 reads, an answer, and as many summaries as the budget asks for
        engine.add_reply(checked(answer))
    agent, rec = make_agent(engine, repo, max_steps=20)
    final = agent.run_turn("read big.txt again and again")
    assert over == []
    assert final.status in ("done", "limit")
    assert any("context:" in getattr(e, "message", "") for e in rec.events)
    assert agent.context_tokens + agent.budget.limits.reply_tokens <= n_ctx
    assert all(r.max_tokens >= 16 for r in engine.requests)


def test_instructions_and_repo_map_in_system_prompt(repo):
    (repo / "CLAUDE.md").write_text("Run tests with `make check`.\n")
    engine = ScriptedEngine(["hello"])
    agent, _ = make_agent(engine, repo)
    agent.run_turn("hi")
    system = agent.messages[0]["content"]
    assert "# Project instructions (CLAUDE.md)\nRun tests with `make check`." in system
    assert "calc.py: def add, def mul" in system
    assert '<tool_call>\n{"name": "read_file", "arguments": {"path": "src/main.py"}}\n</tool_call>' in system
    assert "edit_file" in system and "without any tool call" in system.lower()
    assert engine.prompts[0].startswith("<|im_start|>system\n" + system[:50])
    (repo / "AGENTS.md").write_text("Prefer small functions.\n")
    agent2, _ = make_agent(ScriptedEngine(["x"]), repo)
    assert "(AGENTS.md)\nPrefer small functions." in agent2.messages[0]["content"]
    assert "make check" not in agent2.messages[0]["content"]


def test_tool_schemas_reach_the_prompt(repo):
    engine = ScriptedEngine(["hi"])
    agent, _ = make_agent(engine, repo)
    agent.run_turn("hi")
    assert "<tools>" in engine.prompts[0]
    schemas = [json.loads(line) for line in engine.prompts[0].split("<tools>\n")[1].split("\n</tools>")[0].splitlines()]
    assert {s["function"]["name"] for s in schemas} >= {"read_file", "edit_file", "write_file", "run_shell"}
    assert isinstance(agent.run_turn("again"), Final)
