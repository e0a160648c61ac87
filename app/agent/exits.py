"""How a turn ends: each exit is an exception carrying the ``Final`` it turns into."""

from __future__ import annotations

from app.events import Final


class AgentExit(Exception):
    """Raised inside the loop to end the turn; ``status`` goes into the Final event."""

    status = "failed"

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message

    def final(self) -> Final:
        return Final(self.status, self.message, reason=self.reason)

    @property
    def reason(self) -> str:
        return "" if self.status == "done" else self.message


class Finished(AgentExit):
    """The model answered without a tool call."""

    status = "done"


class StepLimit(AgentExit):
    """The turn used its maximum number of model steps."""

    status = "limit"


class FormatGiveUp(AgentExit):
    """The model produced malformed tool calls too many times in a row."""

    status = "failed"


class Cancelled(AgentExit):
    """The user cancelled (CancelToken set)."""

    status = "cancelled"


class EngineFailed(AgentExit):
    """The engine reported an error."""

    status = "failed"
