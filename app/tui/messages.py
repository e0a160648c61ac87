"""Messages from the session's threads to the app's thread."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from app.controller.model_session import LoadProgress, TurnOutcome
from app.events import AgentEvent


@dataclass
class AgentEventMessage(Message):
    event: AgentEvent


@dataclass
class TurnDone(Message):
    outcome: TurnOutcome


@dataclass
class EngineReady(Message):
    """The session opened its engine and built its agent."""


@dataclass
class EngineFailed(Message):
    message: str


@dataclass
class LoadProgressMessage(Message):
    progress: LoadProgress
