"""What the agent's mixins (``app.agent.judging``, ``app.agent.repair``) use of
``app.agent.loop.Agent``: declared once, so each mixin adds only what it alone needs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from app.agent.checks import CheckState
    from app.agent.finish import TurnFacts
    from app.events import AgentEvent


class AgentParts:
    _check: CheckState | None
    _facts: TurnFacts
    mode: str
    root: Path
    config: Any
    _cancel: Any
    _by_name: dict[str, Any]
    _emit: Callable[[AgentEvent], None]
    _next_id: Callable[[], int]
