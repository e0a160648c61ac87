"""What the session layer needs from an agent, and how it builds the real one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from app.config import Config
from app.events import AgentEvent, Final, Notice
from engine.types import CancelToken, Engine
from tools.permissions_types import Approver
from tools.undo import UndoReport


class AgentLike(Protocol):
    mode: str

    @property
    def session_id(self) -> str: ...
    @property
    def context_tokens(self) -> int: ...
    @property
    def context_limit(self) -> int: ...
    @property
    def messages(self) -> list[dict]: ...

    def run_turn(self, text: str, cancel: CancelToken | None = None) -> Final: ...
    def next_prompt(self, text: str) -> str: ...
    def undo(self) -> UndoReport: ...
    def diff(self) -> str: ...
    def clear(self) -> None: ...
    def compact(self) -> None: ...


AgentFactory = Callable[[Engine, Path, Config, Approver, Callable[[AgentEvent], None], "str | None"], AgentLike]


def default_agent_factory(
    engine: Engine,
    root: Path,
    cfg: Config,
    approver: Approver,
    on_event: Callable[[AgentEvent], None],
    resume: str | None,
) -> AgentLike:
    from app.agent.loop import Agent
    from app.session import Session

    session = Session.resume(resume) if resume else None
    if session is not None and session.report:  # lines of a damaged file were skipped: say so once
        on_event(Notice(session.report))
    return Agent(engine, root, config=cfg, approver=approver, on_event=on_event, session=session)
