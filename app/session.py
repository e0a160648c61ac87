"""Sessions: one JSONL file per conversation under ``state_dir()/sessions/<id>.jsonl``.

Each record is one line, appended, flushed and fsynced as it happens, so a killed process
loses nothing already emitted. Record types:

- ``session``: header {id, workspace, model, mode, created}
- ``message``: one conversation message {message: {role, content, ...}}
- ``reset``: the conversation was replaced (clear / compact) {messages: [...]}
- every agent event as ``event_to_dict`` gives it (``tool_call``, ``tool_result``, ``final`` ...);
  streaming deltas and running stats snapshots are left out (the full message is recorded).

``load_session`` replays ``message``/``reset`` records into the conversation; a truncated last
line (a process killed mid-write) is ignored. Any other line that is not valid JSON or not a
well-formed record is skipped and named in ``SessionInfo.problems``; a file that cannot be read
at all is left out of ``list_sessions`` and named by ``scan_sessions``. Session files are 0600 in
a 0700 directory (they hold the whole conversation).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.config import state_dir
from app.events import AgentEvent, AssistantDelta, EngineStatsEvent, event_to_dict

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,79}")  # our ids and their prefixes: never a path or a glob


def sessions_dir() -> Path:
    return state_dir() / "sessions"


def _private_dir(d: Path) -> None:
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    if d.stat().st_mode & 0o077:
        d.chmod(0o700)


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class SessionInfo:
    id: str
    path: Path
    workspace: str
    model: str
    mode: str
    created: float
    updated: float
    messages: int  # user + assistant messages
    title: str  # the first user message, shortened
    problems: tuple[str, ...] = ()  # lines skipped as malformed, e.g. "line 3: not valid JSON"


class SessionNotFound(LookupError):
    pass


def check_session_id(id_or_prefix: str) -> str:
    """``id_or_prefix`` if it can only name a session file; SessionNotFound otherwise."""
    if not _ID.fullmatch(id_or_prefix):
        raise SessionNotFound(f"{id_or_prefix!r} is not a valid session id (letters, digits, '-' and '_' only)")
    return id_or_prefix


class Session:
    """Appends records to one session file. ``history`` holds the messages of a resumed session."""

    def __init__(self, path: Path, session_id: str, history: list[dict] | None = None) -> None:
        self.id = session_id
        self.path = path
        self.history: list[dict] = list(history or [])
        self.problems: tuple[str, ...] = ()  # what a resumed session's file had malformed
        self.report = ""  # those problems in the one line a front end shows
        _private_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.fchmod(fd, 0o600)  # an older file may be 0644
        self._f = open(fd, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

    @classmethod
    def create(cls, workspace: str | Path = "", model: str = "", mode: str = "", directory: Path | None = None) -> Session:
        sid = new_session_id()
        s = cls((directory or sessions_dir()) / f"{sid}.jsonl", sid)
        s.write({"type": "session", "id": sid, "workspace": str(workspace), "model": model, "mode": mode})
        return s

    @classmethod
    def resume(cls, id_or_latest: str = "latest", directory: Path | None = None) -> Session:
        """Reopen a session for appending; ``history`` is its conversation so far."""
        messages, info = load_session(id_or_latest, directory)
        s = cls(info.path, info.id, messages)
        s.problems = info.problems
        s.report = problem_line(info) if info.problems else ""
        s.write({"type": "resumed"})
        return s

    # -- writing ---------------------------------------------------------------------------
    def write(self, record: dict[str, Any]) -> None:
        if self._f.closed:
            return
        rec = {**record, "ts": round(time.time(), 3)}
        self._f.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
        self._f.flush()
        os.fsync(self._f.fileno())

    def message(self, msg: dict) -> None:
        self.write({"type": "message", "message": msg})

    def reset(self, messages: list[dict]) -> None:
        self.write({"type": "reset", "messages": messages})

    def event(self, ev: AgentEvent) -> None:
        if isinstance(ev, AssistantDelta) or (isinstance(ev, EngineStatsEvent) and not ev.final):
            return
        self.write(event_to_dict(ev))

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _valid_message(m: Any) -> bool:
    if not isinstance(m, dict) or not isinstance(m.get("role"), str):
        return False
    if m.get("content") is not None and not isinstance(m["content"], str):
        return False
    calls = m.get("tool_calls")
    return calls is None or (isinstance(calls, list) and all(
        isinstance(c, dict) and isinstance(c.get("function", {}), dict) for c in calls))


def _record_problem(rec: dict) -> str | None:
    """Why a parsed record cannot be used, or None when it is well formed."""
    ts = rec.get("ts")
    if ts is not None and (isinstance(ts, bool) or not isinstance(ts, (int, float)) or not -1e12 < ts < 1e12):
        return f"'ts' must be a number, got {ts!r:.40}"
    kind = rec.get("type")
    if kind == "message" and not _valid_message(rec.get("message")):
        return "'message' must be an object with a string 'role' and string 'content'"
    if kind == "reset" and not (isinstance(rec.get("messages"), list) and all(map(_valid_message, rec["messages"]))):
        return "'reset.messages' must be a list of messages"
    return None


def _read_records(path: Path) -> tuple[list[dict], list[str]]:
    """The file's well-formed records and one note per line skipped (a cut-short last line is not noted)."""
    out: list[dict] = []
    problems: list[str] = []
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    last = len(lines) - 1  # the text after the final newline: a line still being written
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
        except (json.JSONDecodeError, RecursionError, ValueError):
            if n - 1 != last or not line.startswith("{"):  # a killed write leaves a record's start
                problems.append(f"line {n}: not valid JSON")
            continue
        why = "not a JSON object" if not isinstance(rec, dict) else _record_problem(rec)
        if why is not None:
            problems.append(f"line {n}: {why}")
            continue
        out.append(rec)
    return out, problems


def _replay(records: list[dict]) -> list[dict]:
    messages: list[dict] = []
    for rec in records:
        if rec.get("type") == "message":
            messages.append(rec["message"])
        elif rec.get("type") == "reset":
            messages = list(rec["messages"])
    return messages


def _info(path: Path, records: list[dict], messages: list[dict], problems: list[str]) -> SessionInfo:
    head = next((r for r in records if r.get("type") == "session"), {})
    title = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
    title = " ".join(title.split("\n\n", 1)[0].split())  # the typed text, not attached files
    st = path.stat()
    return SessionInfo(
        id=path.stem,
        path=path,
        workspace=str(head.get("workspace", "")),
        model=str(head.get("model", "")),
        mode=str(head.get("mode", "")),
        created=float(head.get("ts", st.st_mtime)),
        updated=st.st_mtime,
        messages=sum(1 for m in messages if m.get("role") in ("user", "assistant")),
        title=title[:80],
        problems=tuple(problems),
    )


def _load(path: Path) -> tuple[list[dict], SessionInfo]:
    recs, problems = _read_records(path)
    messages = _replay(recs)
    return messages, _info(path, recs, messages, problems)


def problem_line(info: SessionInfo) -> str:
    """The one line that reports what a session file had malformed."""
    more = f" (and {len(info.problems) - 3} more)" if len(info.problems) > 3 else ""
    return f"session {info.id}: skipped {'; '.join(info.problems[:3])}{more}"


def scan_sessions(directory: Path | None = None) -> tuple[list[SessionInfo], list[str]]:
    """All readable sessions, most recently updated first, and one line per file with a problem."""
    d = directory or sessions_dir()
    if not d.is_dir():
        return [], []
    infos: list[SessionInfo] = []
    problems: list[str] = []
    for p in d.glob("*.jsonl"):
        try:
            recs, bad = _read_records(p)
            info = _info(p, recs, _replay(recs), bad)
        except OSError as e:
            problems.append(f"session {p.stem}: cannot be read: {e.strerror or e}")
            continue
        if bad and not recs:
            problems.append(f"session {p.stem}: not a session file ({bad[0]}); left out")
            continue
        if bad:
            problems.append(problem_line(info))
        infos.append(info)
    return sorted(infos, key=lambda i: (i.updated, i.id), reverse=True), problems


def list_sessions(directory: Path | None = None) -> list[SessionInfo]:
    """All readable sessions, most recently updated first (``scan_sessions`` also says what was skipped)."""
    return scan_sessions(directory)[0]


def load_session(id_or_latest: str | None = "latest", directory: Path | None = None) -> tuple[list[dict], SessionInfo]:
    """The conversation (messages, system prompt included) and info of a session.

    ``id_or_latest``: a session id, a unique prefix of one, or ``latest``/None for the newest.
    Raises SessionNotFound (also for an id that is not a valid id, such as a path).
    """
    d = directory or sessions_dir()
    if not id_or_latest or id_or_latest == "latest":
        sessions = list_sessions(d)
        if not sessions:
            raise SessionNotFound("no sessions yet")
        path = sessions[0].path
    else:
        check_session_id(id_or_latest)
        path = d / f"{id_or_latest}.jsonl"
        if not path.is_file():
            matches = sorted(d.glob(f"{id_or_latest}*.jsonl")) if d.is_dir() else []
            if len(matches) != 1:
                what = "no session" if not matches else "several sessions"
                raise SessionNotFound(f"{what} matching {id_or_latest!r}")
            path = matches[0]
    try:
        return _load(path)
    except OSError as e:
        raise SessionNotFound(f"session {path.stem} cannot be read: {e.strerror or e}") from None
