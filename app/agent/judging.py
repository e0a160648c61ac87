"""How a job's turn is judged: its check runs after the edits and its result decides the Final;
a failing call repeated unchanged gets another answer (``app.agent.repeats``).

A mixin of ``app.agent.loop.Agent``: it uses the agent's state (``_check``, ``_facts``,
``policy``, ``_emit``), kept apart so the loop's module stays about the loop.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from app.agent import toolbox
from app.agent.checks import CheckState
from app.agent.confined import read_confined
from app.agent.example_check import (
    MAX_PUSHBACKS,
    examples_nudge,
    is_examples,
    report_output,
    run_example_check,
)
from app.agent.exits import Cancelled
from app.agent.finish import (
    MAX_NUDGES,
    asks_for_change,
    check_nudge,
    rename_asked,
    rename_leftovers,
    rename_nudge,
)
from app.agent.parts import AgentParts
from app.agent.repeats import change_tack
from app.agent.repomap import list_files
from app.agent.shell_setup import shell_options
from app.agent.shown_code import workspace_texts
from app.agent.toolcalls import ToolCall
from app.events import Final, Notice, ToolCallEvent, ToolResultEvent
from tools.base import ToolContext, ToolResult

if TYPE_CHECKING:

    pass


class JudgeMixin(AgentParts):
    insist: bool
    policy: Any
    approver: Any
    journal: Any
    _example_base: dict[str, str]

    def _rename_gate(self, task: str) -> str | None:
        """A rename the task asked for that left the old name in the workspace is not done (with
        or without edits: a run whose every edit failed has not renamed anything either)."""
        asked = rename_asked(task) if asks_for_change(task) and self._facts.nudges < MAX_NUDGES else None
        if asked is None:
            return None
        hits = rename_leftovers(asked[0], workspace_texts(self.root, list_files(self.root)))
        return rename_nudge(*asked, hits) if hits else None

    def _check_gate(self) -> str | None:
        """A job's answer stands only when its check passes after the last edit: run it when it
        has not run since (an explicit check even without edits); the push-back if it fails."""
        st = self._check
        if st is None or not self.insist:
            return None
        if st.passed is None and (self._facts.edits or st.check.explicit):
            self._run_check(st)
        if st.passed is not False:
            return None
        if is_examples(st.check):  # the user's examples may be shorthand: push back a few times, then report
            if st.pushbacks >= MAX_PUSHBACKS:
                return None
            st.pushbacks += 1
            return examples_nudge(st.output)
        return check_nudge(st.check.command, st.exit_code, st.output, st.ran_by_tau > 0, self._facts.edits > 0)

    def _run_check(self, st: CheckState) -> None:
        """Run the check as tau (not the model): an explicit one in any mode, a found one only
        where shell commands run unasked (full-auto)."""
        if not st.check.explicit and self.mode != "full-auto":
            st.skipped = "shell commands need --mode full-auto"
            self._emit(Notice(f"check `{st.check.command}` not run: {st.skipped}"))
            return
        if is_examples(st.check):
            self._run_examples(st)
            return
        self._emit(Notice(f"before accepting the answer: run the check `{st.check.command}`"))
        timeout = st.timeout_s()
        call = ToolCall("run_shell", {"command": st.check.command, "timeout": timeout})
        call_id = f"check_{self._next_id()}"
        self._emit(ToolCallEvent(call_id, call.name, call.arguments))
        policy = self.policy if not st.check.explicit else toolbox.make_policy("full-auto", self.approver)
        ctx = ToolContext(root=self.root, policy=policy, journal=self.journal, cancel=self._cancel,
                          approver=self.approver, extra={"shell": shell_options(self.config, policy.mode)})
        t0 = time.monotonic()
        try:
            result = toolbox.shell_tool().run(call.arguments, ctx)
        except Exception as e:  # a tool bug is a failed check, not a crash
            result = ToolResult(False, f"error: the check failed to run: {type(e).__name__}: {e}")
        took = time.monotonic() - t0
        if result.exit_code is not None and took < timeout:  # it ran to its end (a tool error has no exit code)
            st.finished_in(took)
        self._emit(ToolResultEvent(call_id, call.name, result.ok, result.output, None, result.exit_code,
                                   result.command))
        if self._cancel.cancelled:
            raise Cancelled("cancelled by the user")
        if not st.ran(st.check.command, result.exit_code, result.output, by_tau=True):
            st.skipped = result.output.splitlines()[0] if result.output else "it did not run"

    def _run_examples(self, st: CheckState) -> None:
        """The docstring examples of the changed functions, run in the sandbox (they execute the
        new code, so like a found check only where shell commands run unasked)."""
        report = run_example_check(self.root, self._example_base)
        if report is None or not report.ran:
            st.skipped = report.error if report is not None else "no changed function has docstring examples"
            self._emit(Notice(f"docstring examples not run: {st.skipped}"))
            return
        output = report_output(report)
        st.ran(st.check.command, 0 if report.ok else 1, output, by_tau=True)
        self._emit(Notice(output.splitlines()[0] if report.ok else output))

    def _judged(self, final: Final) -> Final:
        """The turn's Final with its check, and why a job's run did not succeed."""
        st = self._check
        if st is None:
            return final
        reason = final.reason
        if final.status == "done" and is_examples(st.check):
            if st.passed is False:  # pushed back and still failing: not a success
                return replace(final, status="failed", check=st.report(),
                               reason=f"the docstring examples still fail: {st.output.splitlines()[0]}")
            reason = st.output.splitlines()[0] if st.passed else f"no docstring examples checked: {st.skipped or 'no edits'}"
            return replace(final, check=st.report(), reason=reason)
        if final.status == "done":
            reason = "the check passed" if st.passed else f"the check did not run: {st.skipped or 'no edits to check'}"
        elif st.passed is False:
            reason = f"{final.message}; the check `{st.check.command}` still fails"
        return replace(final, check=st.report(), reason=reason)

    def _change_tack(self, call: ToolCall, output: str) -> str:
        """What a repeated identical failure gets instead of the same error (app.agent.repeats)."""
        edit = self._by_name.get("edit_file")
        path = str(call.arguments.get("path", ""))
        text = read_confined(self.root, path, 200_000) if call.name == "edit_file" and path else None
        params = set((edit.parameters or {}).get("properties", {})) if edit else set()
        return change_tack(call, output, text, params)
