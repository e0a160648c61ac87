"""A failing tool call that comes back identical gets a different answer the second time.

Small models resend a call that failed ("search text occurs 2 times") unchanged. Sending the
same error back again rarely helps, so the repeat's result says what else to do: for
edit_file (instead of the error) the file's matching lines with their numbers, the way to
change every occurrence (when the tool has it) and the whole-file write; for any other call
(after its output, which still matters) not to repeat it unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from app.agent.editformat import WHOLE_MAX_LINES
from app.agent.toolcalls import ToolCall

MAX_SHOWN_LINES = 40


def call_key(call: ToolCall) -> str:
    return json.dumps([call.name, call.arguments], sort_keys=True, default=str)


@dataclass
class RepeatGuard:
    """Counts identical failures (same call, same output) within a turn."""

    seen: dict[tuple[str, str], int] = field(default_factory=dict)

    def failed(self, call: ToolCall, output: str) -> int:
        """Record a failure; how many times this exact call has now failed this exact way."""
        key = (call_key(call), output)
        self.seen[key] = self.seen.get(key, 0) + 1
        return self.seen[key]


def numbered_matches(text: str, needle: str, limit: int = MAX_SHOWN_LINES) -> list[str]:
    """The lines of ``text`` holding the first line of ``needle``, as ``N: line``."""
    first = next((ln.strip() for ln in needle.splitlines() if ln.strip()), "")
    if not first:
        return []
    hits = [f"{i}: {ln}" for i, ln in enumerate(text.splitlines(), 1) if first in ln]
    return hits[:limit]


def numbered(text: str, limit: int = WHOLE_MAX_LINES) -> str:
    lines = text.splitlines()
    shown = "\n".join(f"{i}: {ln}" for i, ln in enumerate(lines[:limit], 1))
    return shown + (f"\n[... {len(lines) - limit} more lines]" if len(lines) > limit else "")


def change_tack(call: ToolCall, output: str, file_text: str | None, edit_params: set[str]) -> str:
    """The result to send instead of ``output`` for a call that failed the same way again.
    ``file_text``: the edited file's text (edit_file), ``edit_params``: edit_file's parameters."""
    head = f"This exact call already failed the same way: {output.splitlines()[0] if output else 'error'}\n"
    if call.name != "edit_file" or file_text is None:  # the output itself still matters (a test run's)
        return output + (
            "\n\n[This exact call already failed the same way before. Do not send it again unchanged: "
            "read the error, change the code first, or try something different.]"
        )
    path = str(call.arguments.get("path", "FILE"))
    search = str(call.arguments.get("search", ""))
    lines = [head.rstrip(), "Do not send it again."]
    hits = numbered_matches(file_text, search)
    if hits:
        lines.append(f"The lines of {path} that contain it:")
        lines += [f"  {h}" for h in hits]
    else:
        lines.append(f"{path} with line numbers (the numbers are not part of the file):")
        lines.append(numbered(file_text))
    if len(hits) > 1:
        if "replace_all" in edit_params:
            lines.append('To change every one of them, call edit_file again with "replace_all": true.')
        if "occurrence" in edit_params:
            lines.append('To change only the Nth of them, add "occurrence": N.')
        lines.append("To change one place, make search the whole line with its neighbours so it is unique.")
    n = len(file_text.splitlines())
    if n <= WHOLE_MAX_LINES:
        lines.append(f"Or write the whole new {path} ({n} lines) with write_file: path and the complete content.")
    return "\n".join(lines)
