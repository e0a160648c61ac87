"""The agent's undo answers with what it kept: a file the user changed after the agent wrote it is
left as it is, named with why and a few diff lines, and the session log records it."""

import json

from agent_helpers import call, make_agent

from engine.scripted import ScriptedEngine


def test_undo_keeps_the_users_later_edit_and_says_so(repo):
    engine = ScriptedEngine([
        call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        call("edit_file", path="notes.txt", search="second line", replace="2nd line"),
        "done",
    ])
    agent, _ = make_agent(engine, repo)
    assert agent.run_turn("fix add, shorten the notes").status == "done"
    users = (repo / "calc.py").read_text().replace("return a * b", "return a * b  # checked")
    (repo / "calc.py").write_text(users)
    report = agent.undo()
    assert report.restored == ("notes.txt",) and (repo / "notes.txt").read_text() == "first line\nsecond line\n"
    assert [(k.path, k.why) for k in report.kept] == [("calc.py", "changed")]
    assert "+    return a * b  # checked" in report.kept[0].hint.splitlines()
    assert (repo / "calc.py").read_text() == users  # the user's work, the agent's edit under it
    logged = [json.loads(line) for line in agent.session.path.read_text().splitlines()]
    assert [(r["paths"], r["kept"]) for r in logged if r.get("type") == "undo"] == [(["notes.txt"], ["calc.py"])]
    assert agent.undo().kept == ()  # nothing left to undo: calc.py is not tried again
