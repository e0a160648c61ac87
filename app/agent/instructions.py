"""Project instructions: AGENTS.md in the workspace root, else CLAUDE.md, else CONVENTIONS.md."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
        p = root / name
        if not p.is_file():
            continue
        try:
            text = p.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if not text:
            continue
        if len(text) > max_chars:
            return Instructions(name, text[:max_chars] + "\n[... truncated ...]", True)
        return Instructions(name, text)
    return None
