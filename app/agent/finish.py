"""Is a final answer premature? Small local models often describe a fix instead of making it,
or stop while the tests they just ran still fail. For headless runs (a job to be done, not
a question to be answered) the loop pushes back a couple of times before it accepts. In any
run, a reply that announces an action ("I'll read the file ...") and makes no tool call is
asked for the call: the model forgot it.

Pure: the loop records what happened in the turn (``TurnFacts``) and asks ``premature``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_NUDGES = 4  # per turn (doing what an answer showed counts as one); after that the model's answer stands

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
# "I'll read the file", "Let me run the tests", "Next, I will check ...": an action announced
# in the reply's last sentence, which a reply without a tool call never carries out.
_ACTIONS = (
    "read|open|look|check|run|execute|search|grep|find|list|inspect|examine|view|edit|modify|update|"
    "change|fix|apply|write|create|add|remove|delete|rename|replace|extract|call|use|start|begin|analy[sz]e|review|test"
)
_PROMISE = re.compile(
    r"(?:\bI(?:'ll| will| am going to|'m going to)|\blet me|\blet's|\bnow,? I|\bnext,? I)"
    rf"(?: (?:now|first|then|next|quickly|go ahead and|need to|have to|should))* (?:{_ACTIONS})\w*\b",
    re.I,
)


# "fix ...", "rename x to y", "make the test pass": the user asked for a change, so code the
# reply shows for a workspace file is meant to be applied (proposed through the approval flow)
_CHANGE = re.compile(
    r"\b(?:fix|change|edit|modify|update|rename|refactor|implement|rewrite|replace|add|remove|delete|"
    r"make|correct|repair|convert|move|apply|write|create|improve|optimi[sz]e|clean ?up)\b",
    re.I,
)


_QUESTION = re.compile(r"^\s*(?:how|what|why|where|when|which|who|is|are|does|do|did|should)\b[^\n]*\?\s*$", re.I)


def asks_for_change(text: str) -> bool:
    """Does the user's message ask for the code to change? "Fix add" and "can you fix add?"
    do; a question ("how would I fix add?") does not."""
    text = (text or "").strip()
    return bool(_CHANGE.search(text)) and not _QUESTION.match(text)


def check_nudge(command: str, exit_code: int | None, output: str, ran_by_tau: bool, edited_since: bool,
                edit_tool: str = "edit_file") -> str:
    """The push-back when the run's check does not pass: what it said, and what to do."""
    said = "\n".join(failure_lines(output, 12)) or output[-800:]
    who = "tau ran the check" if ran_by_tau else "The check"
    again = "" if not edited_since else " after your last change"
    return (
        f"{who} `{command}`{again}: it fails (exit code {exit_code}), so the task is not done.\n{said}\n"
        f"Read the failure, fix the code with {edit_tool} (or rewrite the file with write_file), "
        "and the check runs again when you answer. If it cannot pass, say why."
    )


_RENAME = re.compile(
    r"\brename\s+(?:the\s+)?(?:function|method|class|variable|constant|field|attribute)?\s*`?([A-Za-z_]\w*)`?(?:\(\))?"
    r"\s+to\s+`?([A-Za-z_]\w*)`?",
    re.I,
)


def rename_asked(task: str) -> tuple[str, str] | None:
    """(old, new) when the task asks to rename ``old`` to ``new``."""
    m = _RENAME.search(task or "")
    return (m.group(1), m.group(2)) if m and m.group(1) != m.group(2) else None


def rename_leftovers(old: str, texts: dict[str, str], limit: int = 12) -> list[str]:
    """``path:N: line`` for each line of the files where ``old`` is still a whole word."""
    word = re.compile(rf"(?<![\w.]){re.escape(old)}\b")
    hits = [f"{path}:{i}: {ln.strip()}" for path, text in sorted(texts.items())
            for i, ln in enumerate(text.splitlines(), 1) if word.search(ln)]
    return hits[:limit]


def rename_nudge(old: str, new: str, hits: list[str]) -> str:
    return (
        f"`{old}` is still there, and the task renames it to `{new}` everywhere:\n" + "\n".join(hits)
        + "\nRename these too (edit_file with replace_all, or rewrite the file whole), then answer."
    )


@dataclass
class TurnFacts:
    edits: int = 0  # successful file edits this turn
    edits_since_check: int = 0  # edits after the last shell command
    last_command: str | None = None
    last_exit: int | None = None  # exit code of the last shell command this turn
    last_output: str = ""
    nudges: int = 0
    last_answer: str = ""  # the last answer that was pushed back
    same_answers: int = 0  # pushed-back answers that repeated the one before word for word

    def pushed_back(self, answer: str) -> None:
        """An answer went back with a nudge (pushing back again would get the same one again)."""
        self.nudges += 1
        if answer.strip() == self.last_answer:
            self.same_answers += 1
        self.last_answer = answer.strip()

    def edited(self) -> None:
        self.edits += 1
        self.edits_since_check += 1

    def ran(self, command: str | None, exit_code: int | None, output: str = "") -> None:
        self.last_command = command
        self.last_exit = exit_code
        self.last_output = output
        self.edits_since_check = 0


def failure_lines(output: str, n: int = 6) -> list[str]:
    """The lines of a failing command's output that say what failed: pytest's ``E`` lines and
    ``FAILED`` summary, a traceback's last line; else the last non-empty lines."""
    lines = [ln.rstrip() for ln in output.splitlines() if ln.strip() and not ln.startswith("[exit code")]
    key = [ln for ln in lines if ln.startswith(("E ", "FAILED ", "ERROR ")) or "Error:" in ln or "error:" in ln]
    picked = key or lines[-n:]
    return [ln.strip() if not ln.startswith("E ") else ln for ln in picked[:n]]


def has_code_block(text: str) -> bool:
    """A fenced block with at least two non-empty lines (a snippet, not a one-word mention)."""
    return any(sum(1 for ln in m.group(1).splitlines() if ln.strip()) >= 2 for m in _FENCE.finditer(text))


def unkept_promise(text: str) -> str | None:
    """The action a reply without a tool call announces in its last sentence ("I'll read the
    file and ..."), or None. Code blocks do not count, and "let me know" is not an action."""
    prose = _FENCE.sub(" ", text).strip()
    if not prose:
        return None
    sentences = [s.strip() for s in re.split(r"(?<=[.!?:])\s+|\n+", prose) if s.strip()]
    last = sentences[-1] if sentences else ""
    m = _PROMISE.search(last)
    return last if m else None


_TOOL_FOR = (  # the tool an announced verb most likely means, first match wins
    (r"search|grep|find", "grep"),
    (r"list", "list_files"),
    (r"run|execute|test", "run_shell"),
    (r"write|create", "write_file"),
    (r"edit|modify|update|change|fix|apply|add|remove|delete|rename|replace", "edit_file"),
    (r"read|open|look|check|inspect|examine|view|extract|analy[sz]e|review", "read_file"),
)


def promised_tool(sentence: str) -> str | None:
    """The tool an announced action names (the first verb after the promise decides)."""
    m = _PROMISE.search(sentence)
    if not m:
        return None
    verb = m.group(0).rsplit(" ", 1)[-1].lower()
    return next((tool for pattern, tool in _TOOL_FOR if re.match(pattern, verb)), None)


def promise_nudge(sentence: str, example: str = "") -> str:
    """The push-back for a reply that announced an action and stopped."""
    how = f" in this format:\n{example}" if example else "."
    return (
        f'You wrote "{sentence}" but made no tool call, so nothing happened. '
        f"Do it now by calling the tool{how}\nIf you already have what you need, give your final answer instead."
    )


def premature(
    facts: TurnFacts, shows_new_code: bool, edit_tool: str = "edit_file", example: str = "", files: tuple[str, ...] = ()
) -> str | None:
    """The push-back message for a final answer that is not done yet, or None to accept it.

    shows_new_code: the answer holds code that is not merely quoted from the workspace.
    ``example``: a tool call in the model's format, shown when it has to make an edit.
    ``files``: a few of the workspace's files, named so the model knows what it can edit."""
    if facts.nudges >= MAX_NUDGES:
        return None
    where = f" The workspace's files include: {', '.join(files)}." if files else ""
    if facts.edits == 0 and shows_new_code:
        how = f" like this:\n{example}" if example else "."
        return (
            "You have not changed any file: code written in your reply is NOT applied. "
            f"You can edit files and run commands yourself by calling the tools.{where} "
            f"Apply the change now (read the file first if you have not seen it) by calling {edit_tool}{how}"
        )
    if facts.last_exit not in (None, 0):
        cmd = f" (`{facts.last_command}`)" if facts.last_command else ""
        if facts.edits_since_check:
            return f"You changed files after the last command{cmd} failed. Run it again to check your change."
        said = "\n".join(failure_lines(facts.last_output))
        said = f" It said:\n{said}\n" if said else " "
        return (
            f"The last command{cmd} failed with exit code {facts.last_exit}, so the task is not done.{said}"
            f"Find the cause in the code, fix it with {edit_tool}, and run the command again.{where} "
            "If it cannot be fixed, say why."
        )
    return None
