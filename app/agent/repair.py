"""A job with a check starts with edit-and-test rounds, the way aider's ``--test-cmd`` works.

The files the task names (not its tests) are rewritten in the format chosen for them
(``app.agent.direct_edit``: a small file whole, a large one by SEARCH/REPLACE blocks), written
through ``write_file`` (approval, permissions, undo), and the check runs. The first round is
greedy, what ``tau edit`` would write; while the check fails, each later round is a fresh,
sampled try from the original files, told the lines of the check's output that name the
failure (a small model asked to repair its own code mostly returns it unchanged; independent
tries judged by the tests solve more). Code already tried is not written or checked again. A
small model loses most in tool calls, so the tool loop takes over only when the rounds run out,
with the check's last output.

A job with no check tau may run still starts with one round, what ``tau edit`` would write: on
six outside problems whose runs had no check the tool loop solved 1 where ``tau edit`` solved 4.
A job that names no file means the workspace's one source file, when it has only one.

A mixin of ``app.agent.loop.Agent``: it uses the agent's tools, check and events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.agent.checks import CheckState, tail
from app.agent.confined import read_confined
from app.agent.direct_edit import EditError, EditOutcome, plan_edit, retry_sampling
from app.agent.exits import Cancelled, Finished
from app.agent.finish import asks_for_change, failure_lines
from app.agent.mentions import mentioned_files
from app.agent.parts import AgentParts
from app.agent.repomap import is_source
from app.agent.shown_code import is_test_file
from app.agent.toolcalls import ToolCall
from app.events import (
    AssistantDelta,
    AssistantMessage,
    EngineStatsEvent,
    Notice,
    ToolCallEvent,
    ToolResultEvent,
)
from tools.secret_files import is_secret_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from tools.base import ToolResult

MAX_ROUNDS = 6
LOOP_STEPS = 2  # steps the tool loop keeps after the rounds
FEEDBACK_CHARS = 2000


def repair_targets(task: str, files: list[str]) -> list[str]:
    """The files a job's edit rounds rewrite: those the task names, less tests and secrets; when
    it names none of those, the workspace's only source file that is not a test, if there is one."""
    named = mentioned_files(task, files)
    targets = [f for f in named if not is_test_file(f) and not is_secret_path(f)]
    if targets or not all(map(is_test_file, named)):  # a named file tau may not rewrite is not a licence to pick another
        return targets
    sources = [f for f in files if is_source(f) and not is_test_file(f) and not is_secret_path(f)]
    return sources if len(sources) == 1 else []


def names_only_tests(task: str, files: list[str]) -> bool:
    """The task names files, all of them tests: a job about the tests themselves, unless a check
    says the tests are the judge."""
    named = mentioned_files(task, files)
    return bool(named) and all(map(is_test_file, named))


def round_instruction(task: str, command: str, failure: str | None) -> str:
    """The task, and after a failed round what its check said (the lines that name the failure)."""
    if failure is None:
        return task
    said = "\n".join(failure_lines(failure, 8)) or tail(failure, FEEDBACK_CHARS)
    return (f"{task}\n\nAn earlier attempt failed the check `{command}`:\n```\n{said}\n```\n"
            "Write a correct implementation (do not change the tests).")


class RepairMixin(AgentParts):
    _task: str
    engine: Any
    context_limit: int
    _add: Callable[[dict], None]
    _run_tool: Callable[[ToolCall], ToolResult]
    _run_check: Callable[[CheckState], None]
    _rename_gate: Callable[[str], str | None]

    def _repair_rounds(self, files: list[str], budget: int) -> int:
        """Edit-and-test rounds for a job with a check; raises Finished once the check passes.
        Without a check tau may run, one round (``_single_round``). Returns the model steps spent
        (0 when there is no file to edit)."""
        st = self._check
        targets = repair_targets(self._task, files)
        if not targets or "write_file" not in self._by_name or budget < 3:
            return 0
        if st is None or (not st.check.explicit and self.mode != "full-auto"):  # nothing tau may iterate on
            if not asks_for_change(self._task) or names_only_tests(self._task, files):
                return 0
            return self._single_round(targets)
        originals = {p: t for p in targets if (t := read_confined(self.root, p)) is not None}
        spent, failure = 0, None
        tried: set[tuple[str, ...]] = set()
        for n in range(1, MAX_ROUNDS + 1):
            if spent >= budget - LOOP_STEPS:
                break
            if self._cancel.cancelled:
                raise Cancelled("cancelled by the user")
            self._emit(Notice(f"edit round {n}: {', '.join(targets)}" + ("" if failure is None else " (a fresh try, told what failed)")))
            outcome = self._plan_round(targets, round_instruction(self._task, st.check.command, failure), "edit rounds",
                                       retries=0, base=originals if n > 1 else None,
                                       sampling=None if n == 1 else retry_sampling(self.config.temperature, self.config.top_p, n))
            if outcome is None:
                return spent
            spent += outcome.generations
            key = tuple(c.new for c in outcome.changes)
            if not outcome.changes or key in tried:
                why = "; ".join(outcome.failures)[:200] or "the same code as an earlier round"
                self._emit(Notice(f"edit round {n} changed nothing: {why}"))
                continue
            tried.add(key)
            if not self._write_round(outcome.changes):
                return spent
            self._run_check(st)
            if st.passed:
                done = f"Changed {', '.join(c.path for c in outcome.changes)}; the check `{st.check.command}` passes."
                self._add({"role": "assistant", "content": done})
                raise Finished(done)
            if st.passed is None:  # the check could not run (not allowed here): nothing to iterate on
                return spent
            failure = st.output
        if failure is not None:
            now = "".join(f"\n{p}\n```\n{t}```\n" for p in targets if (t := read_confined(self.root, p)) is not None)
            self._add({"role": "user", "content": (
                f"(tau rewrote {', '.join(targets)} and ran the check `{st.check.command}`; it still fails:)\n"
                f"```\n{tail(failure, FEEDBACK_CHARS)}\n```\nThe files now:{now}\n"
                "Find what is wrong and fix the code (not the tests).")})
        return spent

    def _single_round(self, targets: list[str]) -> int:
        """One greedy round with nothing to judge it, written through write_file; raises Finished
        when it changed the files and left no rename undone. Returns the model steps spent (the
        tool loop goes on from there)."""
        self._emit(Notice(f"edit round: {', '.join(targets)} (no check to run)"))
        outcome = self._plan_round(targets, self._task, "edit round", retries=1)
        if outcome is None:
            return 0
        if not outcome.changes:
            why = "; ".join(outcome.failures)[:200] or "the reply changed no file"
            self._emit(Notice(f"edit round changed nothing: {why}"))
            return outcome.generations
        if not self._write_round(outcome.changes):
            return outcome.generations
        if self._check is not None:  # a check tau may not run here: the Final says so
            self._run_check(self._check)
        done = f"Changed {', '.join(c.path for c in outcome.changes)}."
        self._add({"role": "assistant", "content": done})
        nudge = self._rename_gate(self._task)
        if nudge is not None:  # the tool loop finishes what the round left
            self._facts.nudges += 1
            self._emit(Notice(f"not done yet: {nudge}"))
            self._add({"role": "user", "content": nudge})
            return outcome.generations
        raise Finished(done)

    def _plan_round(self, targets: list[str], instruction: str, what: str, **kw: Any) -> EditOutcome | None:
        """One round's edit, planned (``plan_edit`` with ``kw``) and its stats reported; None when
        the files cannot be edited this way (said in a notice starting with ``what``)."""
        try:
            outcome = plan_edit(self.engine, self.root, targets, instruction, cancel=self._cancel,
                                on_text=lambda t: self._emit(AssistantDelta(t)), **kw)
        except EditError as e:
            self._emit(Notice(f"{what} skipped: {e}"))
            return None
        if outcome.stats is not None:
            self._emit(EngineStatsEvent(outcome.stats, True, 0, self.context_limit))
        if self._cancel.cancelled:
            raise Cancelled("cancelled by the user")
        return outcome

    def _write_round(self, changes: list) -> bool:
        """Write a round's files through write_file; False when one was refused."""
        self._emit(AssistantMessage(f"Rewrote {', '.join(c.path for c in changes)}."))
        for c in changes:
            call = ToolCall("write_file", {"path": c.path, "content": c.new})
            call_id = f"round_{self._next_id()}"
            self._emit(ToolCallEvent(call_id, call.name, {"path": c.path}))
            result = self._run_tool(call)
            self._emit(ToolResultEvent(call_id, call.name, result.ok, result.output, result.diff,
                                       result.exit_code, result.command))
            if not result.ok:
                self._emit(Notice(f"edit rounds stopped: {result.output.splitlines()[0] if result.output else 'refused'}"))
                return False
            self._facts.edited()
            if self._check is not None:
                self._check.edited()
        return True
