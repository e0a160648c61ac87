"""The slash commands' names, usage and help, and how a typed line is parsed and completed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    name: str  # without the slash
    args: str  # usage of the arguments, '' if none
    help: str


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "", "show keys and commands"),
    SlashCommand("undo", "", "undo the file changes of the last turn"),
    SlashCommand("diff", "", "show the changes made in this session"),
    SlashCommand("clear", "", "start a fresh conversation"),
    SlashCommand("model", "", "show the target and draft models"),
    SlashCommand("mode", "[ask|auto-edit|full-auto]", "show or set the permission mode"),
    SlashCommand("stats", "", "session totals and tok/s, tau per turn"),
    SlashCommand("sessions", "", "list saved sessions"),
    SlashCommand("compact", "", "summarise the conversation to free context"),
    SlashCommand("theme", "[name]", "list themes or switch (remembered)"),
    SlashCommand("quit", "", "leave tau"),
)
NAMES = tuple(c.name for c in COMMANDS)
MODES = ("ask", "auto-edit", "full-auto")


def parse(text: str) -> tuple[str, str] | None:
    """'/mode ask' -> ('mode', 'ask'); None if ``text`` is not a slash command."""
    s = text.strip()
    if not s.startswith("/") or s.startswith("//"):
        return None
    name, _, rest = s[1:].partition(" ")
    return name.lower(), rest.strip()


def complete(text: str) -> list[str]:
    """Completions ('/name') of a partial command like '/th'; [] once an argument is typed."""
    if not text.startswith("/") or " " in text or "\n" in text:
        return []
    prefix = text[1:].lower()
    return ["/" + n for n in NAMES if n.startswith(prefix)]


def resolve(name: str) -> str | None:
    """A full command name, or the only command a unique prefix stands for."""
    if name in NAMES:
        return name
    hits = [n for n in NAMES if n.startswith(name)]
    return hits[0] if len(hits) == 1 else None


def help_text() -> str:
    width = max(len(c.name) + len(c.args) for c in COMMANDS) + 3
    lines = []
    for c in COMMANDS:
        usage = f"/{c.name} {c.args}".rstrip()
        lines.append(f"{usage:<{width}} {c.help}")
    return "\n".join(lines)
