"""The slash commands' behaviour: each takes the session and its argument, returns a typed result."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.config import save_setting
from app.controller import commands
from app.controller.results import (
    Cleared,
    CommandResult,
    Compacted,
    HelpShown,
    ModelShown,
    ModeSet,
    Problem,
    QuitRequested,
    SessionDiff,
    SessionsListed,
    StatsShown,
    ThemeList,
    ThemeSet,
    Undone,
)

if TYPE_CHECKING:
    from app.controller.model_session import ModelSession

# commands that touch the conversation: not while a turn runs, not before the agent exists
NEEDS_AGENT = frozenset({"undo", "diff", "clear", "compact"})
# commands that may take a while (the model, git, the disk): a UI runs them off its thread
SLOW = NEEDS_AGENT | {"sessions"}


def resolve(name: str) -> str | None:
    return commands.resolve(name)


def run(session: ModelSession, name: str, arg: str) -> CommandResult:
    full = commands.resolve(name)
    if full is None:
        return Problem(f"unknown command /{name}; /help lists them")
    if full in NEEDS_AGENT:
        if session.generating:
            return Problem(f"/{full}: still generating (ctrl+c cancels)")
        if session.agent is None:
            return Problem(f"/{full}: the model is not loaded yet")
    return HANDLERS[full](session, arg.strip())


def _help(session: ModelSession, arg: str) -> CommandResult:
    return HelpShown(commands.help_text())


def _quit(session: ModelSession, arg: str) -> CommandResult:
    return QuitRequested()


def _stats(session: ModelSession, arg: str) -> CommandResult:
    return StatsShown(session.stats.report())


def _model(session: ModelSession, arg: str) -> CommandResult:
    if session.engine is None:
        return Problem("the model is still loading")
    return ModelShown(session.engine.info, session.cfg.spec)


def _mode(session: ModelSession, arg: str) -> CommandResult:
    modes = commands.MODES
    if not arg:  # cycles
        cur = session.mode
        new = modes[(modes.index(cur) + 1) % len(modes)] if cur in modes else modes[0]
    elif arg in modes:
        new = arg
    else:
        return Problem(f"/mode: choose one of {', '.join(modes)}")
    session.mode = new
    return ModeSet(new)


def _theme(session: ModelSession, arg: str) -> CommandResult:
    names = tuple(session.themes)
    if not arg:
        return ThemeList(session.theme, names)
    if arg not in names:
        return Problem(f"/theme: no theme {arg!r}; try: {', '.join(names)}")
    session.theme = arg
    error = ""
    if session.persist:
        try:
            save_setting("theme", arg)
        except Exception as e:
            error = session.errors.exception("could not save the theme", e)
    return ThemeSet(arg, error)


def _sessions(session: ModelSession, arg: str) -> CommandResult:
    from app.session import list_sessions

    return SessionsListed(tuple(list_sessions()[:30]))


def _undo(session: ModelSession, arg: str) -> CommandResult:
    assert session.agent is not None
    report = session.agent.undo()
    return Undone(report.restored, report.kept, report.failed)


def _diff(session: ModelSession, arg: str) -> CommandResult:
    assert session.agent is not None
    return SessionDiff(session.agent.diff())


def _clear(session: ModelSession, arg: str) -> CommandResult:
    assert session.agent is not None
    session.agent.clear()
    return Cleared()


def _compact(session: ModelSession, arg: str) -> CommandResult:
    agent = session.agent
    assert agent is not None
    agent.compact()
    return Compacted(agent.context_tokens, agent.context_limit)


HANDLERS: dict[str, Callable[[ModelSession, str], CommandResult]] = {
    "help": _help,
    "quit": _quit,
    "stats": _stats,
    "model": _model,
    "mode": _mode,
    "theme": _theme,
    "sessions": _sessions,
    "undo": _undo,
    "diff": _diff,
    "clear": _clear,
    "compact": _compact,
}
assert set(HANDLERS) == set(commands.NAMES), "every command in the registry has a handler"
