"""Finding 11 (sessions): bad session files are reported in one line and skipped, never crash
``tau sessions`` or ``--resume``; files are private; a session id cannot name a path."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from app import session as sessions_mod
from app.cli.main import main
from app.session import Session, SessionNotFound, list_sessions, load_session, sessions_dir


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TAU_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("TAU_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "state"


def _good(text: str = "hello") -> str:
    with Session.create(workspace="/w", model="m", mode="ask") as s:
        s.message({"role": "user", "content": text})
        s.message({"role": "assistant", "content": "hi"})
    return s.id


def _write(name: str, lines: list[str] | bytes) -> Path:
    d = sessions_dir()
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{name}.jsonl"
    if isinstance(lines, bytes):
        p.write_bytes(lines)
    else:
        p.write_text("".join(line + "\n" for line in lines))
    return p


HEAD = json.dumps({"type": "session", "id": "x", "workspace": "/w", "model": "m", "mode": "ask", "ts": 1.0})
USER = json.dumps({"type": "message", "message": {"role": "user", "content": "task"}, "ts": 2.0})
BAD_FILES: dict[str, list[str] | bytes] = {
    "20260101-000000-aaaaa1": [json.dumps({"type": "session", "ts": "yesterday"}), USER],
    "20260101-000000-aaaaa2": [HEAD, json.dumps({"type": "reset", "messages": ["x"]})],
    "20260101-000000-aaaaa3": [HEAD, json.dumps({"type": "message", "message": {"role": "user", "content": 3,
                                                                                 "tool_calls": ["x"]}})],
    "20260101-000000-aaaaa4": [HEAD, json.dumps({"type": "session", "ts": float("nan")}), USER],
    "20260101-000000-aaaaa5": b"\x00\xff\xfe garbage \x89PNG\r\n\x1a\n" * 50,
    "20260101-000000-aaaaa6": [HEAD, "[1, 2", USER],
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_file_never_crashes_listing_or_resume_latest(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    good = _good()
    _write(name, BAD_FILES[name])
    assert good in [i.id for i in list_sessions()]
    infos, problems = sessions_mod.scan_sessions()
    messages, info = load_session("latest")  # never raises on the bad file
    assert all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages)
    for i in infos:
        assert isinstance(i.created, float) and i.created == i.created  # a real number, not NaN
    assert main(["sessions"]) == 0
    assert main(["sessions", name]) in (0, 2)
    assert main(["sessions", "--json"]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err


def test_bad_record_is_reported_in_one_line_and_the_rest_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    _write("20260101-000000-bbbbb1", [HEAD, USER, json.dumps({"type": "reset", "messages": ["x"]}),
                                      json.dumps({"type": "message", "message": {"role": "assistant", "content": "ok"}})])
    messages, info = load_session("20260101-000000-bbbbb1")
    assert [m["content"] for m in messages] == ["task", "ok"]
    assert len(info.problems) == 1 and "line 3" in info.problems[0]
    assert main(["sessions"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "20260101-000000-bbbbb1" in line]
    assert len(lines) == 1 and "line 3" in lines[0]


def test_corrupt_middle_line_is_reported_not_silently_dropped() -> None:
    _write("20260101-000000-ccccc1", [HEAD, USER, "{not json", json.dumps(
        {"type": "message", "message": {"role": "assistant", "content": "after"}})])
    messages, info = load_session("20260101-000000-ccccc1")
    assert [m["content"] for m in messages] == ["task", "after"]
    assert any("line 3" in p for p in info.problems)
    infos, problems = sessions_mod.scan_sessions()
    assert any("20260101-000000-ccccc1" in p and "line 3" in p for p in problems)


def test_truncated_last_line_of_a_killed_process_is_still_ignored_quietly() -> None:
    p = _write("20260101-000000-ddddd1", [HEAD, USER])
    with open(p, "a") as f:
        f.write('{"type": "message", "mess')
    messages, info = load_session("20260101-000000-ddddd1")
    assert [m["content"] for m in messages] == ["task"] and info.problems == ()


def test_garbage_only_file_is_skipped_with_a_report() -> None:
    good = _good()
    _write("20260101-000000-eeeee1", b"\x00\x01\x02\xff" * 100)
    infos, problems = sessions_mod.scan_sessions()
    assert [i.id for i in infos] == [good]
    assert len([p for p in problems if "20260101-000000-eeeee1" in p]) == 1


def test_session_files_are_private() -> None:
    sid = _good()
    d = sessions_dir()
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert stat.S_IMODE((d / f"{sid}.jsonl").stat().st_mode) == 0o600


def test_existing_sessions_dir_is_tightened() -> None:
    d = sessions_dir()
    d.mkdir(parents=True)
    d.chmod(0o755)
    _good()
    assert stat.S_IMODE(d.stat().st_mode) == 0o700


@pytest.mark.parametrize("bad", ["../evil", "/etc/passwd", "a/b", "..", "x*", "[ab]", "a\x00b", "", " latest"])
def test_session_ids_cannot_name_paths(bad: str, tmp_path: Path) -> None:
    _good()
    evil = sessions_dir().parent / "evil.jsonl"
    evil.write_text(HEAD + "\n" + USER + "\n")
    if bad == "":
        load_session(bad)  # empty means latest, as before
        return
    with pytest.raises(SessionNotFound, match="not a valid session id"):
        load_session(bad)
    with pytest.raises(SessionNotFound, match="not a valid session id"):
        Session.resume(bad)


def test_cli_refuses_a_path_as_session_id(capsys: pytest.CaptureFixture[str]) -> None:
    _good()
    assert main(["sessions", "../evil"]) == 2
    assert "not a valid session id" in capsys.readouterr().err


def test_resume_reports_the_skipped_lines_once(tmp_path: Path) -> None:
    from app.config import Config
    from app.controller.agent import default_agent_factory
    from app.events import Notice
    from engine.scripted import ScriptedEngine
    from tools.permissions_types import approve_all

    _write("20260101-000000-fffff1", [HEAD, USER, "garbage{", json.dumps({"type": "reset", "messages": [1]})])
    seen: list = []
    agent = default_agent_factory(ScriptedEngine(["ok"]), tmp_path, Config(), approve_all, seen.append,
                                  "20260101-000000-fffff1")
    notices = [e.message for e in seen if isinstance(e, Notice)]
    assert len(notices) == 1 and "line 3" in notices[0] and "line 4" in notices[0]
    assert agent is not None
