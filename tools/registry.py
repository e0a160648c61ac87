"""The tool set the agent offers the model, and its function-calling schemas."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tools.base import Tool, schema
from tools.file_edit import EditFile, WriteFile
from tools.file_read import ReadFile
from tools.file_search import Grep, ListFiles
from tools.git_tools import GitCommit, GitDiff, GitLog, GitStatus
from tools.shell import RunShell


def default_tools() -> list[Tool]:
    """Every tool, in the order the model sees them."""
    return [
        ReadFile(),
        ListFiles(),
        Grep(),
        WriteFile(),
        EditFile(),
        RunShell(),
        GitStatus(),
        GitDiff(),
        GitLog(),
        GitCommit(),
    ]


def tool_schemas(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """OpenAI / Qwen function-tool schemas of ``tools``."""
    return [schema(t) for t in tools]


def by_name(tools: Iterable[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}
