"""Prompts tuned for a small local model: short, concrete, one worked example of the call format."""

from __future__ import annotations

import json
import platform
from collections.abc import Sequence

from app.agent.instructions import Instructions
from tools.base import Tool

SYSTEM_TEMPLATE = """You are tau, a coding assistant working in the repository at {root} ({os}).
You help by reading code, editing files and running commands through tools.

To call a tool, write one JSON object per call inside <tool_call></tool_call> tags, for example:
<tool_call>
{example}
</tool_call>
You may make several calls in one message. Tool results come back in <tool_response> tags.

Rules:
- If the user only asks a question you can answer, answer directly.
- Change files only through tools: code you merely write in a reply is NOT applied.
- Read a file before you edit it.{edit_rule}
- After changing code, run the tests{shell_hint}.
- To fix a bug: run the failing test, read the code it points to, fix it, run the test again.
- Keep answers short. Do not invent file contents.
- When the task is done, answer in plain text WITHOUT any tool call; say briefly what you changed."""


def _example(tool_names: Sequence[str]) -> str:
    if "read_file" in tool_names:
        call = {"name": "read_file", "arguments": {"path": "src/main.py"}}
    elif tool_names:
        call = {"name": tool_names[0], "arguments": {}}
    else:
        call = {"name": "tool_name", "arguments": {}}
    return json.dumps(call)


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


def system_prompt(
    root: str,
    tools: Sequence[Tool],
    repo_map: str = "",
    instructions: Instructions | None = None,
) -> str:
    tool_names = [t.name for t in tools]
    edit_rule = _edit_rule(tools)
    shell_hint = ""
    for name in ("shell", "run_shell", "bash", "run_command"):
        if name in tool_names:
            shell_hint = f" with {name}"
            break
    text = SYSTEM_TEMPLATE.format(
        root=root, os=platform.system() or "unknown", example=_example(tool_names),
        edit_rule=edit_rule, shell_hint=shell_hint,
    )
    if instructions is not None:
        text += f"\n\n# Project instructions ({instructions.path})\n{instructions.text}"
    if repo_map:
        text += f"\n\n# Repository map (files and their top-level symbols)\n{repo_map}"
    return text


FORMAT_FEEDBACK = (
    "Your tool call could not be used: {error}.\n"
    "Write the call exactly like this, with valid JSON (double quotes, no trailing commas):\n"
    "<tool_call>\n{example}\n</tool_call>\n"
    "Or, if the task is done, answer in plain text without a tool call."
)

SUMMARY_SYSTEM = (
    "You summarize a coding session so it can continue with less context. Write at most 12 short"
    " bullet points: the user's goals, files read or changed (with paths), decisions, errors seen,"
    " and what is still to do. No preamble."
)
