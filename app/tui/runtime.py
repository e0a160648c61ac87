"""How the front ends (TUI and ``--plain``) build the engine and the agent. Plain Python."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from app.config import Config
from app.events import AgentEvent, Final
from engine.types import CancelToken, Engine
from tools.permissions_types import Approver


class AgentLike(Protocol):
    mode: str
    session_id: str
    context_tokens: int
    context_limit: int
    messages: list[dict]

    def run_turn(self, text: str, cancel: CancelToken | None = None) -> Final: ...
    def undo(self) -> list[str]: ...
    def diff(self) -> str: ...
    def clear(self) -> None: ...
    def compact(self) -> None: ...


EngineFactory = Callable[[Callable[..., None]], Engine]
AgentFactory = Callable[[Engine, Path, Config, Approver, Callable[[AgentEvent], None], "str | None"], AgentLike]


def default_engine_factory(cfg: Config) -> EngineFactory:
    def factory(notify: Callable[..., None]) -> Engine:
        from app.engine_factory import open_engine

        def progress(message: str, fraction: float) -> None:
            notify(message, float(fraction))

        return open_engine(cfg, notify=notify, progress=progress)

    return factory


def default_agent_factory(
    engine: Engine,
    root: Path,
    cfg: Config,
    approver: Approver,
    on_event: Callable[[AgentEvent], None],
    resume: str | None,
) -> AgentLike:
    from app.agent.loop import Agent

    session = None
    if resume:
        from app.session import Session

        session = Session.resume(resume)
    agent: Any = Agent(engine, root, config=cfg, approver=approver, on_event=on_event, session=session)
    return agent


