"""Events the agent loop emits. Front ends (TUI, plain, `tau run --json`, server) consume them.

All frozen dataclasses; ``to_dict`` gives the JSONL form `tau run --json` prints.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from engine.types import GenStats


@dataclass(frozen=True)
class SessionStarted:
    session_id: str
    workspace: str
    model: str
    mode: str


@dataclass(frozen=True)
class AssistantDelta:
    """Streaming text of the assistant's current message."""

    text: str


@dataclass(frozen=True)
class AssistantMessage:
    """The assistant's complete message of one step (tool-call markup removed)."""

    content: str


@dataclass(frozen=True)
class ToolCallEvent:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolResultEvent:
    call_id: str
    name: str
    ok: bool
    output: str
    diff: str | None = None  # unified diff for edits
    exit_code: int | None = None  # for shell
    command: str | None = None  # for shell


@dataclass(frozen=True)
class EngineStatsEvent:
    """Engine stats: running snapshots (final=False) and the end of each generation."""

    stats: GenStats
    final: bool = False
    context_tokens: int = 0
    context_limit: int = 0


@dataclass(frozen=True)
class Final:
    """The turn/run ended. status: 'done' | 'failed' | 'limit' | 'cancelled'.

    ``reason``: why it ended so, in words (a job's run: the check passed, still fails, ...);
    ``check``: a job's check and its last result (app.agent.checks.CheckState.report), if any."""

    status: str
    message: str = ""
    reason: str = ""
    check: dict[str, Any] | None = None


@dataclass(frozen=True)
class ErrorEvent:
    message: str
    details: str = ""


@dataclass(frozen=True)
class Notice:
    """Informational line for the user (e.g. 'attached to tau serve at ...')."""

    message: str
    extra: dict[str, Any] = field(default_factory=dict)


AgentEvent = (
    SessionStarted
    | AssistantDelta
    | AssistantMessage
    | ToolCallEvent
    | ToolResultEvent
    | EngineStatsEvent
    | Final
    | ErrorEvent
    | Notice
)

_TYPE_NAMES = {
    SessionStarted: "session_start",
    AssistantDelta: "assistant_delta",
    AssistantMessage: "assistant_message",
    ToolCallEvent: "tool_call",
    ToolResultEvent: "tool_result",
    EngineStatsEvent: "engine_stats",
    Final: "final",
    ErrorEvent: "error",
    Notice: "notice",
}


def event_to_dict(ev: AgentEvent) -> dict[str, Any]:
    """JSON-ready form: {'type': ..., fields...}; stats are flattened with GenStats.to_dict()."""
    if isinstance(ev, EngineStatsEvent):
        d: dict[str, Any] = {"stats": ev.stats.to_dict(), "final": ev.final}
        d["context_tokens"] = ev.context_tokens
        d["context_limit"] = ev.context_limit
    else:
        d = asdict(ev)
    return {"type": _TYPE_NAMES[type(ev)], **d}
