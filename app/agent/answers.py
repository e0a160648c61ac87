"""What a reply that calls no tool is missing: the edit for code it showed changed, a rerun of a
failing check, or a nudge for an empty reply or a promised call it did not make.

A mixin of ``app.agent.loop.Agent``: it uses the agent's tools, wire format and turn facts, kept
apart so the loop's module stays about the loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.agent.finish import MAX_NUDGES, has_code_block, promise_nudge, promised_tool, unkept_promise
from app.agent.parts import AgentParts
from app.agent.repomap import list_files
from app.agent.shown_code import only_quotes, shown_calls, workspace_texts
from app.agent.toolcalls import ToolCall

if TYPE_CHECKING:
    from app.wire.base import Wire


class AnswerMixin(AgentParts):
    _wants_change: bool
    insist: bool
    wire: Wire

    def _shown_edit_calls(self, content: str, texts: dict[str, str] | None = None) -> list[ToolCall]:
        """edit_file/write_file calls for the definitions or whole files a message showed changed
        (app.agent.shown_code). ``texts``: the workspace's files when the caller has read them."""
        if not has_code_block(content) or not {"edit_file", "write_file"} & set(self._by_name):
            return []
        if texts is None:
            texts = workspace_texts(self.root, list_files(self.root))
        return shown_calls(content, texts, set(self._by_name))

    def _judge_code(self, content: str) -> tuple[list[ToolCall], bool]:
        """For a final answer: the calls it should have made - an edit for code it showed
        changed instead of editing (any front end, when the user asked for a change; the
        edit goes through the usual approval), and for a job a rerun of this turn's failing
        check once files changed since - and whether the answer shows code that is not a
        quote of the workspace."""
        facts = self._facts
        if not self._wants_change or facts.nudges >= MAX_NUDGES:
            return [], False
        calls: list[ToolCall] = []
        new_code = False
        if has_code_block(content):  # after an edit too: code that differs from the file now is a new change
            texts = workspace_texts(self.root, list_files(self.root))  # read once for both questions
            new_code = not only_quotes(content, texts)
            calls = self._shown_edit_calls(content, texts)
        failing = facts.last_command if facts.last_exit not in (None, 0) else None
        if self.insist and failing and (calls or facts.edits_since_check) and "run_shell" in self._by_name:
            calls.append(ToolCall("run_shell", {"command": failing}))  # only a command it ran itself this turn
        return calls, new_code

    def _empty_nudge(self, content: str) -> str | None:
        """An empty reply is no answer: a turn never ends 'done' on one while nudges are left."""
        if content.strip() or self._facts.nudges >= MAX_NUDGES:
            return None
        return "Your reply was empty. Answer the task in words, or make the tool call you need."

    def _promise_nudge(self, content: str) -> str | None:
        """A reply that says it will do something ("I'll read the file") but calls no tool:
        the model forgot the call, so ask for it (interactive or not, within the nudge budget)."""
        sentence = unkept_promise(content) if self._facts.nudges < MAX_NUDGES else None
        if sentence is None:
            return None
        named = next((name for name in self._by_name if name in sentence), None)  # "I'll use grep to ..."
        return promise_nudge(sentence, self._call_example(named or promised_tool(sentence)))

    def _call_example(self, name: str | None) -> str:
        """A tool call in the model's format with the tool's required arguments as placeholders."""
        tool = self._by_name.get(name or "")
        if tool is None:
            return ""
        required = (tool.parameters or {}).get("required", [])
        return self.wire.call_text(tool.name, {a: "..." for a in required})

    def _edit_example(self) -> str:
        edit = self._by_name.get("edit_file")
        if edit is None:
            return ""
        args = {"path": "FILE", "search": "the exact lines to change", "replace": "what they become"}
        props = set((edit.parameters or {}).get("properties", {}))
        if not set(args) <= props:
            return ""
        return self.wire.call_text(edit.name, args)
