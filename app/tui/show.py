"""How the TUI shows a slash command's result: a notice, a panel, a card, or an action."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from app.controller import results as r
from app.tui.cards import DiffCard
from app.tui.screens import TextScreen

if TYPE_CHECKING:
    from app.tui.app import TauApp

HELP_KEYS = """enter        send
ctrl+j       newline (shift+enter where the terminal reports it)
up / down    input history (on the first / last line)
tab          complete a /command
ctrl+c       cancel generation; press twice to quit
esc          close a dialog (rejects an approval)
f1           this help
f2           session statistics
approval     y approve · a always (this session) · n reject (with the note typed)"""


def render(app: TauApp, result: r.CommandResult) -> None:
    if isinstance(result, r.Problem):
        app.add_notice(result.message, result.severity)
    elif isinstance(result, r.HelpShown):
        app.push_screen(TextScreen("tau: keys and commands", Text(HELP_KEYS + "\n\n" + result.commands)))
    elif isinstance(result, r.QuitRequested):
        app.action_quit_app()
    elif isinstance(result, r.StatsShown):
        app.action_stats()
    elif isinstance(result, r.SessionsListed):
        app.push_screen(TextScreen("Sessions", Text(r.text(result))))
    elif isinstance(result, r.SessionDiff):
        app.transcript.mount(DiffCard("session diff", result.diff))
    elif isinstance(result, r.Undone) and (result.kept or result.failed):
        app.add_notice(r.text(result), "warning")  # the user's work was kept: say so where it shows
    elif isinstance(result, r.ModelShown):
        app.add_notice(r.text(result), "block")
    elif isinstance(result, r.ModeSet):
        app.status.set_live(mode=result.mode)
        app.add_notice(r.text(result))
    elif isinstance(result, r.ThemeSet):
        app.theme = result.name
        app.status.refresh_bar()
        if result.save_error:
            app.add_notice(result.save_error, "error")
        app.add_notice(r.text(result))
    else:
        if isinstance(result, r.Cleared):
            app.transcript.clear()
        elif isinstance(result, r.Compacted) and result.context_limit:
            app.status.set_live(context_tokens=result.context_tokens, context_limit=result.context_limit)
        app.add_notice(r.text(result))
