"""A repeated identical failure changes tack; template markup and stray calls never end a turn as
its answer; shown code becomes a proposed edit in interactive turns, through the approval."""

from agent_helpers import ROUND_MISSES, call, make_agent

from app.agent.replyclean import embedded_calls, strip_markup
from app.events import Final, ToolResultEvent
from engine.scripted import ScriptedEngine
from tools.permissions_types import ApprovalDecision

CONFIG = (
    "def merge(a, b):\n    out = dict(a)\n    for k, v in b.items():\n"
    "        if isinstance(v, dict):\n            out[k] = merge(out.get(k, {}), v)\n"
    "        else:\n            out[k] = v\n    return out\n"
)


def test_the_same_failing_call_is_not_answered_the_same_way_twice(repo):
    (repo / "config.py").write_text(CONFIG)
    same = call("edit_file", path="config.py", search="merge", replace="deep_merge")
    engine = ScriptedEngine([same, same, same, "I could not do it."])
    agent, rec = make_agent(engine, repo)
    agent.run_turn("Rename merge to deep_merge in config.py")
    first, second, third = (r.output for r in rec.of(ToolResultEvent))
    assert "occurs 2 times" in first and second != first and third == second
    assert "already failed the same way" in second and "Do not send it again" in second
    assert "  1: def merge(a, b):" in second and "  5:             out[k] = merge(out.get(k, {}), v)" in second
    assert "write_file" in second and "(8 lines)" in second
    # a different call after a failure is answered as usual
    other = call("edit_file", path="config.py", search="no such text anywhere", replace="x")
    agent, rec = make_agent(ScriptedEngine([same, other, "stop"]), repo)
    agent.run_turn("Rename merge")
    assert [r.ok for r in rec.of(ToolResultEvent)] == [False, False]
    assert "already failed" not in rec.of(ToolResultEvent)[1].output


def test_a_repeated_failure_of_a_secret_file_shows_none_of_it(repo):
    (repo / ".env").write_text("KEY=supersecret\nKEY=supersecret\n")
    same = call("edit_file", path=".env", search="nothing like it", replace="x")
    agent, rec = make_agent(ScriptedEngine([same, same, "ok"]), repo)
    agent.run_turn("edit .env")
    assert all("supersecret" not in r.output for r in rec.of(ToolResultEvent))


def test_markup_is_stripped_and_a_stray_call_is_made():
    assert strip_markup("<|im_start|>assistant\nThe answer is 4.<|im_end|>") == "The answer is 4."
    assert strip_markup("Done.\n<|im_start|>user\nthanks<|im_end|>") == "Done."
    assert strip_markup("<|im_assistant>Hi<end_of_turn>") == "Hi"
    assert strip_markup("x = a | b  # <not markup>") == "x = a | b  # <not markup>"
    text, calls = embedded_calls('Now I edit: {"name": "read_file", "arguments": {"path": "a.py"}} ok', {"read_file"})
    assert text == "Now I edit:  ok" and calls[0].arguments == {"path": "a.py"}
    assert embedded_calls('{"name": "other", "arguments": {}}', {"read_file"})[1] == []


def test_a_final_answer_never_carries_markup_or_a_raw_call(repo):
    raw = '<|im_start|>assistant\n{"name": "edit_file", "arguments": {"path": "calc.py", "search": "return a - b", "replace": "return a + b"}}'
    engine = ScriptedEngine([*ROUND_MISSES, raw, "<|im_start|>assistant\nFixed add().<|im_end|>"])
    agent, rec = make_agent(engine, repo, insist=True)
    final = agent.run_turn("fix add in calc.py")
    assert final == Final("done", "Fixed add().") and "return a + b" in (repo / "calc.py").read_text()
    assert "<|im_start|>" not in "".join(str(m.get("content")) for m in agent.messages[1:])


class Asked:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.requests: list = []

    def __call__(self, request):
        self.requests.append(request)
        return ApprovalDecision(self.answer)


SHOWN = "Here's the corrected calc.py:\n```python\ndef add(a, b):\n    return a + b\n```"


def test_interactive_shown_code_is_proposed_through_the_approval(repo):
    approver = Asked(True)
    engine = ScriptedEngine([SHOWN, "Applied the fix."])
    agent, _ = make_agent(engine, repo, mode="ask", approver=approver)
    assert agent.run_turn("The test of add fails. Fix calc.py.").status == "done"
    assert [r.kind for r in approver.requests] == ["edit"] and "+    return a + b" in approver.requests[0].diff
    assert "return a + b" in (repo / "calc.py").read_text()
    assert agent.undo().restored == ("calc.py",)
    rejecting = Asked(False)
    agent, _ = make_agent(ScriptedEngine([SHOWN, "OK, not applied."]), repo, mode="ask", approver=rejecting)
    agent.run_turn("Fix calc.py.")
    assert len(rejecting.requests) == 1 and "a - b" in (repo / "calc.py").read_text()


def test_a_whole_file_shown_changed_becomes_a_write(repo):
    reply = "The fixed notes.txt:\n```\nfirst line\nsecond line, fixed\n```"
    agent, rec = make_agent(ScriptedEngine([reply, "Done."]), repo)
    agent.run_turn("Fix the second line of notes.txt")
    assert (repo / "notes.txt").read_text() == "first line\nsecond line, fixed\n"
    assert rec.of(ToolResultEvent)[0].name == "write_file"


def test_tau_run_rename_changes_tack_then_renames_the_def_and_the_recursive_call(in_repo, engines, capsys):
    import json

    from app.cli.main import main

    (in_repo / "config.py").write_text(CONFIG)
    queue, made = engines
    same = call("edit_file", path="config.py", search="merge", replace="deep_merge")
    renamed = CONFIG.replace("merge(", "deep_merge(")

    def whole(prompt: str) -> str:  # the model takes the offered whole-file write
        assert "write_file" in prompt.rsplit("already failed the same way", 1)[-1]
        return call("write_file", path="config.py", content=renamed)

    queue.append(ScriptedEngine([same, same, whole, "Renamed merge to deep_merge."]))
    code = main(["run", "Rename the function merge to deep_merge, including its recursive call.", "--json"])
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and events[-1]["status"] == "done" and events[-1]["message"] == "Renamed merge to deep_merge."
    text = (in_repo / "config.py").read_text()
    assert "def deep_merge(a, b):" in text and "out[k] = deep_merge(out.get(k, {}), v)" in text
    assert "merge(" not in text.replace("deep_merge(", "")


def test_a_repeated_failing_command_keeps_its_output_and_gets_a_note(repo):
    same = call("run_shell", command="echo boom; exit 3")
    agent, rec = make_agent(ScriptedEngine([same, same, "It fails."]), repo, mode="full-auto")
    agent.run_turn("run it")
    first, second = (r.output for r in rec.of(ToolResultEvent))
    assert "boom" in first and "already failed" not in first
    assert second.startswith(first) and "already failed the same way before" in second


def test_a_rename_that_left_the_old_name_is_pushed_back(repo):
    # what the 1.5B model did through tau run: renamed the def, not the recursive call, and stopped
    (repo / "config.py").write_text(CONFIG)
    engine = ScriptedEngine([
        call("edit_file", path="config.py", search="def merge(a, b):", replace="def deep_merge(a, b):"),
        "Renamed merge to deep_merge.",
        call("edit_file", path="config.py", search="merge(out.get", replace="deep_merge(out.get"),
        "Renamed both.",
    ])
    agent, _ = make_agent(engine, repo, insist=True)
    final = agent.run_turn("Rename the function merge to deep_merge, including its recursive call.")
    assert final.status == "done" and final.message == "Renamed both."
    assert "config.py:5: out[k] = merge(out.get(k, {}), v)" in engine.prompts[2]
    text = (repo / "config.py").read_text()
    assert "def deep_merge(a, b):" in text and "deep_merge(out.get" in text


def test_a_rename_whose_every_edit_failed_is_pushed_back_and_a_raw_json_write_is_a_call(repo):
    # what the 1.5B model did through tau run: an edit of a file that does not exist, then a
    # write_file call as bare JSON with the file's docstring quotes unescaped, as its "answer"
    (repo / "config.py").write_text(CONFIG)
    renamed = CONFIG.replace("merge(", "deep_merge(").replace("    out = dict(a)\n", '    """Merge b into a."""\n    out = dict(a)\n', 1)
    raw = '{"name": "write_file", "arguments": {"path": "config.py", "content": "' + renamed.replace("\n", "\\n") + '"}}'
    assert '"""' in raw  # not valid JSON as written
    engine = ScriptedEngine([
        *ROUND_MISSES,
        call("edit_file", path="src/main.py", search="def merge(a, b):", replace="def deep_merge(a, b):"),
        "I renamed the function.",
        raw,
        "Renamed merge to deep_merge.",
    ])
    agent, rec = make_agent(engine, repo, insist=True)
    final = agent.run_turn("Rename the function merge to deep_merge in config.py, including its recursive call.")
    assert "config.py:1: def merge(a, b):" in engine.prompts[4]  # no edit succeeded: still not done
    assert final.status == "done" and final.message == "Renamed merge to deep_merge."
    assert (repo / "config.py").read_text() == renamed


def test_a_bare_call_to_a_known_tool_that_is_not_json_is_an_error_not_an_answer():
    from app.agent.toolcalls import parse_reply

    broken = '{"name": "write_file", "arguments": {"path": "a.py", "content": "x = [1, 2"'
    r = parse_reply(broken + ', "mode": }}', {"write_file": None, "read_file": None})
    assert r.calls == [] and r.content == "" and r.errors and "not valid JSON" in r.errors[0]
    shown = parse_reply('{"name": "Ada", "arguments": 3, "x": }', {"write_file": None})
    assert shown.errors == [] and shown.content.startswith("{")  # not a tool's name: just text
