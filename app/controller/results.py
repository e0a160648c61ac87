"""What a slash command returns: one frozen dataclass per kind of answer.

The session layer runs the command; a front end only renders the result. :func:`text` is
the plain-text form of any result (the ``--plain`` interface prints it, the TUI shows it as
a notice where it has no richer view), so both say the same words.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from app.session import SessionInfo
from engine.types import ModelInfo
from tools.undo import Kept
from tools.visible import visible_line

KEPT_WHY = {  # what the user is told about a file undo left alone
    "changed": "changed since tau wrote it: left as it is",
    "deleted": "deleted since tau wrote it: left deleted",
    "symlink": "it or a folder above it is now a symlink: left as it is",
}


@dataclass(frozen=True)
class Problem:
    """The command did not run: unknown, bad argument, busy, or it failed (then logged)."""

    message: str
    severity: str = "warning"  # warning | error


@dataclass(frozen=True)
class HelpShown:
    commands: str  # the commands' usage table


@dataclass(frozen=True)
class QuitRequested:
    pass


@dataclass(frozen=True)
class Undone:
    files: tuple[str, ...]  # restored; () when there was nothing to undo
    kept: tuple[Kept, ...] = ()  # left as they are: changed since tau wrote them (the user's work)
    failed: tuple[str, ...] = ()  # "path: error"; still undoable, the next /undo tries again


@dataclass(frozen=True)
class SessionDiff:
    diff: str  # unified diff of the session's changes, "" when there are none


@dataclass(frozen=True)
class Cleared:
    pass


@dataclass(frozen=True)
class Compacted:
    context_tokens: int
    context_limit: int


@dataclass(frozen=True)
class ModelShown:
    info: ModelInfo
    spec: str  # the speculation setting


@dataclass(frozen=True)
class ModeSet:
    mode: str


@dataclass(frozen=True)
class StatsShown:
    report: str  # the session's totals and per-turn plots


@dataclass(frozen=True)
class SessionsListed:
    sessions: tuple[SessionInfo, ...]  # most recently used first


@dataclass(frozen=True)
class ThemeList:
    current: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class ThemeSet:
    name: str
    save_error: str = ""  # why it could not be remembered (logged); "" when saved or not asked to


CommandResult = (
    Problem | HelpShown | QuitRequested | Undone | SessionDiff | Cleared | Compacted | ModelShown | ModeSet
    | StatsShown | SessionsListed | ThemeList | ThemeSet
)


def session_line(info: SessionInfo) -> str:
    """One saved session: id, when it was last used (local time), size and title."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated))
    return f"{info.id}  {when}  {info.messages:3d} msgs  {info.title[:50]}".rstrip()


def model_lines(shown: ModelShown) -> list[str]:
    i = shown.info
    return [
        f"model   {i.name}",
        f"path    {i.path}",
        f"arch    {i.arch}  quant {i.quant}  context {i.n_ctx}",
        f"draft   {i.draft_name or 'none'}",
        f"backend {i.backend}   speculation {shown.spec}",
    ]


def undone_text(result: Undone) -> str:
    """What /undo did: restored files, then each file kept and why (with a few diff lines), then errors."""
    if not (result.files or result.kept or result.failed):
        return "undo: nothing to undo"
    lines = ["undo: restored " + ", ".join(map(visible_line, result.files))] if result.files else []
    for k in result.kept:
        lines.append(f"undo: kept {visible_line(k.path)} ({KEPT_WHY[k.why]})")
        if k.hint:
            lines += ["  what tau wrote -> what is there now:", *("    " + h for h in k.hint.splitlines())]
    lines += [f"undo: could not restore {visible_line(f)} (the next /undo tries again)" for f in result.failed]
    return "\n".join(lines)


def text(result: CommandResult) -> str:
    """The plain-text form of a result."""
    match result:
        case Problem(message=message):
            return message
        case HelpShown(commands=table):
            return table
        case QuitRequested():
            return "bye"
        case Undone():
            return undone_text(result)
        case SessionDiff(diff=diff):
            return diff.rstrip("\n") if diff.strip() else "no changes"
        case Cleared():
            return "conversation cleared"
        case Compacted():
            return "conversation compacted"
        case ModelShown():
            return "\n".join(model_lines(result))
        case ModeSet(mode=mode):
            return f"mode: {mode}"
        case StatsShown(report=report):
            return report
        case SessionsListed(sessions=sessions):
            shown = [session_line(s) for s in sessions] or ["no saved sessions"]
            return "\n".join([*shown, "", "resume one with: tau --resume ID"])
        case ThemeList(current=current, names=names):
            listed = "  ".join(("*" if n == current else "") + n for n in names)
            return f"themes: {listed}\n/theme NAME switches; user themes: <config dir>/themes/*.toml"
        case ThemeSet(name=name):
            return f"theme: {name}"
