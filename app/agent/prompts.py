"""Prompts tuned for a small local model: short, concrete, one worked example of the call format."""

from __future__ import annotations

import platform
from collections.abc import Sequence

from app.agent.instructions import Instructions
from app.wire import Wire
from app.wire.chatml import QWEN25
from tools.base import Tool

# The fixed part of the system prompt comes first and names nothing of this run (no path, no
# OS, no file), so every run of one model shares it byte for byte and its KV state can be
# saved once (issue 14); the per-workspace facts follow it.
FIXED_TEMPLATE = """You are tau, a coding assistant working in a code repository.
You help by reading code, editing files and running commands through tools.

{protocol}

Rules:
- If the user only asks a question you can answer, answer directly.
- Change files only through tools: code you merely write in a reply is NOT applied.
- Read a file before you edit it.{edit_rule}
- After changing code, run the tests{shell_hint}.
- To fix a bug: run the failing test, read the code it points to, fix it, run the test again.
- Keep answers short. Do not invent file contents.
- When the task is done, answer in plain text WITHOUT any tool call; say briefly what you changed."""

WORKSPACE_TEMPLATE = "# Workspace\nThe repository is at {root} ({os})."


def _example(tool_names: Sequence[str]) -> tuple[str, dict]:
    if "read_file" in tool_names:
        return "read_file", {"path": "src/main.py"}
    if tool_names:
        return tool_names[0], {}
    return "tool_name", {}


def _edit_rule(tools: Sequence[Tool]) -> str:
    edit = next((t for t in tools if t.name == "edit_file"), None)
    if edit is None:
        return ""
    props = list((edit.parameters or {}).get("properties", {}))
    search = next((p for p in props if p in ("search", "old", "old_text", "old_string", "find")), "search")
    replace = next((p for p in props if p in ("replace", "new", "new_text", "new_string")), "replace")
    create = " Create new files with write_file." if any(t.name == "write_file" for t in tools) else ""
    return (
        f"\n- To change a file use edit_file: \"{search}\" = the whole lines to change, copied exactly"
        f" from the file; \"{replace}\" = what those lines become (the search lines are removed)."
        " Small edits, one place at a time."
        + create
    )


def fixed_prompt(tools: Sequence[Tool], wire: Wire = QWEN25, schemas: Sequence[dict] = ()) -> str:
    """The part of the system prompt every run shares: instructions, call format, tool schemas."""
    tool_names = [t.name for t in tools]
    shell_hint = next((f" with {n}" for n in ("shell", "run_shell", "bash", "run_command") if n in tool_names), "")
    text = FIXED_TEMPLATE.format(
        protocol=wire.protocol(wire.call_text(*_example(tool_names))),
        edit_rule=_edit_rule(tools), shell_hint=shell_hint,
    )
    block = wire.tools_block(schemas)
    return text + "\n\n" + block if block else text


def system_prompt(
    root: str,
    tools: Sequence[Tool],
    repo_map: str = "",
    instructions: Instructions | None = None,
    wire: Wire = QWEN25,
    schemas: Sequence[dict] = (),
) -> str:
    """The fixed part, then this workspace's facts (path, OS, project instructions, repo map).
    ``schemas``: the tools' JSON schemas, written into the fixed part in ``wire``'s format."""
    text = fixed_prompt(tools, wire, schemas)
    text += "\n\n" + WORKSPACE_TEMPLATE.format(root=root, os=platform.system() or "unknown")
    if instructions is not None:
        text += f"\n\n# Project instructions ({instructions.path})\n{instructions.text}"
    if repo_map:
        text += f"\n\n# Repository map (files and their top-level symbols)\n{repo_map}"
    return text


FORMAT_FEEDBACK = (
    "Your tool call could not be used: {error}.\n"
    "Write the call exactly like this, with valid JSON (double quotes, no trailing commas):\n"
    "{example}\n"
    "Or, if the task is done, answer in plain text without a tool call."
)

SUMMARY_SYSTEM = (
    "You summarize a coding session so it can continue with less context. Write at most 12 short"
    " bullet points: the user's goals, files read or changed (with paths), decisions, errors seen,"
    " and what is still to do. No preamble."
)
