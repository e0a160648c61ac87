"""Project instructions: AGENTS.md in the workspace root, else CLAUDE.md, else CONVENTIONS.md."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.agent.confined import read_confined

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", "CONVENTIONS.md")
MAX_CHARS = 6000


@dataclass(frozen=True)
class Instructions:
    path: str  # file name relative to the workspace
    text: str
    truncated: bool = False


def load_instructions(root: Path, max_chars: int = MAX_CHARS) -> Instructions | None:
    """The first instruction file found in ``root`` (the first of INSTRUCTION_FILES wins)."""
    for name in INSTRUCTION_FILES:
        body = read_confined(root, name, errors="replace")  # a symlink out never reaches the system prompt
        if body is None:
            continue
        text = body.strip()
        if not text:
            continue
        if len(text) > max_chars:
            return Instructions(name, text[:max_chars] + "\n[... truncated ...]", True)
        return Instructions(name, text)
    return None
