"""Glue to the tools package: the default tool set, the permission policy and the undo journal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.base import Tool
from tools.permissions_types import Approver


def default_tools() -> list[Tool]:
    from tools.registry import default_tools as tools_default

    return list(tools_default())


def shell_tool() -> Tool:
    """The shell tool tau runs a job's check with (app.agent.checks)."""
    from tools.shell import RunShell

    return RunShell()


def tool_schemas(tools: list[Tool]) -> list[dict]:
    from tools.registry import tool_schemas as registry_schemas

    return list(registry_schemas(tools))


def make_policy(mode: str, approver: Approver) -> Any:
    from tools.permissions import Policy

    return Policy(mode, approver)


def make_undo_journal(root: Path) -> Any:
    from tools.undo import UndoJournal

    return UndoJournal(root)
