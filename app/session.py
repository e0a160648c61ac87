"""Sessions: one JSONL file per conversation under ``state_dir()/sessions/<id>.jsonl``.

Each record is one line, appended, flushed and fsynced as it happens, so a killed process
loses nothing already emitted. Record types:

- ``session``: header {id, workspace, model, mode, created}
- ``message``: one conversation message {message: {role, content, ...}}
- ``reset``: the conversation was replaced (clear / compact) {messages: [...]}
- every agent event as ``event_to_dict`` gives it (``tool_call``, ``tool_result``, ``final`` ...);
  streaming deltas and running stats snapshots are left out (the full message is recorded).

``load_session`` replays ``message``/``reset`` records into the conversation; a truncated last
line (a process killed mid-write) is ignored.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.config import state_dir
from app.events import AgentEvent, AssistantDelta, EngineStatsEvent, event_to_dict


def sessions_dir() -> Path:
    return state_dir() / "sessions"


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


class SessionNotFound(LookupError):
    pass


class Session:
    """Appends records to one session file. ``history`` holds the messages of a resumed session."""

    def __init__(self, path: Path, session_id: str, history: list[dict] | None = None) -> None:
        self.id = session_id
        self.path = path
        self.history: list[dict] = list(history or [])
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

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


def _read_records(path: Path) -> list[dict]:
    out: list[dict] = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a killed process
            if isinstance(rec, dict):
                out.append(rec)
    return out


def _replay(records: list[dict]) -> list[dict]:
    messages: list[dict] = []
    for rec in records:
        if rec.get("type") == "message" and isinstance(rec.get("message"), dict):
            messages.append(rec["message"])
        elif rec.get("type") == "reset" and isinstance(rec.get("messages"), list):
            messages = list(rec["messages"])
    return messages


def _info(path: Path, records: list[dict], messages: list[dict]) -> SessionInfo:
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
    )


def list_sessions(directory: Path | None = None) -> list[SessionInfo]:
    """All sessions, most recently updated first."""
    d = directory or sessions_dir()
    if not d.is_dir():
        return []
    infos = []
    for p in d.glob("*.jsonl"):
        try:
            recs = _read_records(p)
            infos.append(_info(p, recs, _replay(recs)))
        except OSError:
            continue
    return sorted(infos, key=lambda i: (i.updated, i.id), reverse=True)


def load_session(id_or_latest: str | None = "latest", directory: Path | None = None) -> tuple[list[dict], SessionInfo]:
    """The conversation (messages, system prompt included) and info of a session.

    ``id_or_latest``: a session id, a unique prefix of one, or ``latest``/None for the newest.
    Raises SessionNotFound.
    """
    d = directory or sessions_dir()
    if not id_or_latest or id_or_latest == "latest":
        sessions = list_sessions(d)
        if not sessions:
            raise SessionNotFound("no sessions yet")
        path = sessions[0].path
    else:
        path = d / f"{id_or_latest}.jsonl"
        if not path.is_file():
            matches = sorted(d.glob(f"{id_or_latest}*.jsonl")) if d.is_dir() else []
            if len(matches) != 1:
                what = "no session" if not matches else "several sessions"
                raise SessionNotFound(f"{what} matching {id_or_latest!r}")
            path = matches[0]
    recs = _read_records(path)
    messages = _replay(recs)
    return messages, _info(path, recs, messages)
