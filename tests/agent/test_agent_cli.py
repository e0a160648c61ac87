import io
import json
import os
import signal
import threading

from agent_helpers import ROUND_MISSES, call

from app.cli.main import main
from engine.scripted import ScriptedEngine

FIX_ADD = """calc.py
<<<<<<< SEARCH
    return a - b
=======
    return a + b
>>>>>>> REPLACE
"""


def test_edit_yes_applies_and_prints_diff(in_repo, engines, capsys):
    queue, made = engines
    queue.append(ScriptedEngine([FIX_ADD]))
    assert main(["edit", "calc.py", "make add() add", "--yes"]) == 0
    assert "return a + b" in (in_repo / "calc.py").read_text()
    out = capsys.readouterr()
    assert "-    return a - b\n+    return a + b" in out.out and "\x1b[" not in out.out  # plain: not a tty
    eng = made[0]
    assert eng.contexts["file:calc.py"].startswith("def add(a, b):\n    return a - b")
    # a small file is rewritten whole (app.agent.editformat); a SEARCH/REPLACE answer still applies
    assert "complete new content" in eng.prompts[0] and "make add() add" in eng.prompts[0]
    assert "return a - b" in eng.prompts[0] and eng.requests[0].sampling.temperature == 0.0
    assert eng.closed


def test_edit_json_is_a_dry_run_without_yes(in_repo, engines, capsys):
    queue, _ = engines
    queue.append(ScriptedEngine([FIX_ADD]))
    assert main(["edit", "calc.py", "make add() add", "--json"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["files"] == ["calc.py"] and got["applied"] is False
    assert "+    return a + b" in got["diff"] and got["stats"]["completion_tokens"] > 0
    assert "return a - b" in (in_repo / "calc.py").read_text()
    queue.append(ScriptedEngine([FIX_ADD]))
    assert main(["edit", "calc.py", "make add() add", "--json", "--yes"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["applied"] is True and got["stats"]["generations"] == 1


def test_edit_retries_a_missed_block_then_applies(in_repo, engines):
    queue, made = engines
    wrong = FIX_ADD.replace("    return a - b\n=", "    return a -- c  # nonsense\n    x = 1\n=")
    queue.append(ScriptedEngine([wrong, FIX_ADD]))
    assert main(["edit", "calc.py", "fix add", "-y"]) == 0
    assert "return a + b" in (in_repo / "calc.py").read_text()
    assert "did not apply" in made[0].prompts[1]


def test_edit_no_applicable_edit_exits_1(in_repo, engines, capsys):
    queue, _ = engines
    queue.append(ScriptedEngine(["I think the code is fine.", "Really, it is fine."]))
    before = (in_repo / "calc.py").read_text()
    assert main(["edit", "calc.py", "fix add", "--yes"]) == 1
    assert (in_repo / "calc.py").read_text() == before
    assert "no applicable edit" in capsys.readouterr().err


def test_edit_bad_usage_exits_2(in_repo, engines, capsys):
    assert main(["edit", "missing.py", "do things"]) == 2
    assert "no such file: missing.py" in capsys.readouterr().err
    assert main(["edit", "calc.py"]) == 2
    assert main(["edit", "calc.py", "   "]) == 2
    assert engines[1] == []  # no engine was opened


def test_edit_two_files_and_whole_file_reply(in_repo, engines):
    queue, _ = engines
    reply = FIX_ADD + "\nnotes.txt\n<<<<<<< SEARCH\nsecond line\n=======\nsecond line, edited\n>>>>>>> REPLACE\n"
    queue.append(ScriptedEngine([reply]))
    assert main(["edit", "calc.py", "notes.txt", "fix both", "--yes"]) == 0
    assert (in_repo / "notes.txt").read_text() == "first line\nsecond line, edited\n"
    queue.append(ScriptedEngine(["```\nfirst line\nonly line now\n```\n"]))
    assert main(["edit", "notes.txt", "rewrite", "--yes"]) == 0
    assert (in_repo / "notes.txt").read_text() == "first line\nonly line now\n"


def test_edit_keeps_crlf_line_ends(in_repo, engines):
    (in_repo / "win.txt").write_bytes(b"alpha\r\nbeta\r\n")
    queue, _ = engines
    queue.append(ScriptedEngine(["win.txt\n<<<<<<< SEARCH\nbeta\n=======\ngamma\n>>>>>>> REPLACE\n"]))
    assert main(["edit", "win.txt", "beta to gamma", "--yes"]) == 0
    assert (in_repo / "win.txt").read_bytes() == b"alpha\r\ngamma\r\n"


def run_json(capsys, argv):
    code = main(argv)
    lines = capsys.readouterr().out.splitlines()
    return code, [json.loads(line) for line in lines]


def test_run_json_streams_events_and_edits(in_repo, engines, capsys):
    queue, made = engines
    queue.append(ScriptedEngine([
        *ROUND_MISSES,  # the first edit round writes nothing: the tool loop edits
        call("read_file", path="calc.py"),
        call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        "Fixed add().",
    ]))
    code, events = run_json(capsys, ["run", "fix add in calc.py", "--json"])
    assert code == 0
    types = [e["type"] for e in events]
    assert types[0] == "session_start" and events[0]["mode"] == "auto-edit"
    assert types[-1] == "final" and events[-1] == {"type": "final", "status": "done", "message": "Fixed add().",
                                                "reason": "", "check": None}  # no tests here: no check
    for t in ("assistant_delta", "tool_call", "tool_result", "engine_stats", "assistant_message"):
        assert t in types
    edit = [e for e in events if e["type"] == "tool_result"][1]
    assert edit["ok"] and "+    return a + b" in edit["diff"]
    stats = next(e for e in events if e["type"] == "engine_stats" and e["final"])
    assert stats["stats"]["completion_tokens"] > 0 and stats["context_limit"] == 32768
    assert "return a + b" in (in_repo / "calc.py").read_text()
    assert made[0].closed


def test_run_json_of_a_job_without_a_check_reports_its_edit_round(in_repo, engines, capsys):
    queue, _ = engines
    fixed = (in_repo / "calc.py").read_text().replace("a - b", "a + b")
    queue.append(ScriptedEngine([f"calc.py\n```python\n{fixed}```\n"]))
    code, events = run_json(capsys, ["run", "fix add in calc.py", "--json"])
    assert code == 0 and (in_repo / "calc.py").read_text() == fixed
    assert events[-1] == {"type": "final", "status": "done", "message": "Changed calc.py.", "reason": "", "check": None}
    writes = [e for e in events if e["type"] == "tool_result" and e["name"] == "write_file"]
    assert len(writes) == 1 and writes[0]["ok"] and "+    return a + b" in writes[0]["diff"]


def test_run_plain_reads_stdin_and_prints_answer(in_repo, engines, capsys, monkeypatch):
    queue, made = engines
    queue.append(ScriptedEngine(["The answer is 42."]))
    monkeypatch.setattr("sys.stdin", io.StringIO("what is the answer?\n"))
    assert main(["run", "-"]) == 0
    assert capsys.readouterr().out == "The answer is 42.\n"
    assert "what is the answer?" in made[0].prompts[0]


def test_run_limits_and_failures_exit_1(in_repo, engines, capsys):
    queue, _ = engines
    queue.append(ScriptedEngine([call("read_file", path="calc.py")] * 3))
    code, events = run_json(capsys, ["run", "loop", "--json", "--max-steps", "2"])
    assert code == 1 and events[-1]["status"] == "limit"
    queue.append(ScriptedEngine(["<tool_call>{oops"] * 3))
    assert main(["run", "format trouble"]) == 1
    assert "failed: gave up after 3 malformed" in capsys.readouterr().err


def test_run_shell_denied_headless_unless_full_auto(in_repo, engines, capsys):
    queue, _ = engines
    queue.append(ScriptedEngine([call("run_shell", command="touch ran.txt"), "could not"]))
    code, events = run_json(capsys, ["run", "touch it", "--json"])
    result = next(e for e in events if e["type"] == "tool_result")
    assert code == 0 and not result["ok"] and "rejected" in result["output"]
    assert not (in_repo / "ran.txt").exists()
    queue.append(ScriptedEngine([call("run_shell", command="touch ran.txt"), "done"]))
    code, events = run_json(capsys, ["run", "touch it", "--json", "--mode", "full-auto"])
    result = next(e for e in events if e["type"] == "tool_result")
    assert code == 0 and result["ok"] and result["exit_code"] == 0 and (in_repo / "ran.txt").exists()


def test_run_bad_usage_exits_2(in_repo, engines, monkeypatch):
    assert main(["run"]) == 2
    monkeypatch.setattr("sys.stdin", io.StringIO("   \n"))
    assert main(["run", "-"]) == 2
    assert main(["run", "x", "--max-steps", "0"]) == 2
    assert main(["run", "x", "--session", "no-such-session"]) == 2
    assert engines[1] == []


def test_run_sigint_cancels_with_130(in_repo, engines, capsys):
    queue, _ = engines
    queue.append(ScriptedEngine(["thinking " * 5000], delay=0.002))
    before = signal.getsignal(signal.SIGINT)  # default, or ignored when the tests run in the background
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    code, events = run_json(capsys, ["run", "take your time", "--json"])
    assert code == 130 and events[-1]["status"] == "cancelled"
    assert signal.getsignal(signal.SIGINT) is before  # tau run put the previous handler back


def test_sessions_list_show_and_continue(in_repo, engines, capsys):
    queue, made = engines
    queue.append(ScriptedEngine([call("read_file", path="notes.txt"), "Two lines."]))
    assert main(["run", "count lines in notes.txt"]) == 0
    capsys.readouterr()
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    sid = out.split()[0]
    assert "count lines in notes.txt" in out and "tau --resume" in out
    assert main(["sessions", sid]) == 0
    shown = capsys.readouterr().out
    assert "user: count lines in notes.txt" in shown and "[read_file" in shown and "assistant: Two lines." in shown
    assert main(["sessions", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[0]["id"] == sid and listed[0]["messages"] == 3
    queue.append(ScriptedEngine(["Still two."]))
    assert main(["run", "and now?", "--session", "latest"]) == 0
    assert "count lines in notes.txt" in made[1].prompts[0]
    assert main(["sessions", "nope"]) == 2
