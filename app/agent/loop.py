"""The agent loop: ask the model, run the tool calls it makes, repeat until it answers.

One turn = ``run_turn(text)``: steps until the model replies without a tool call (Finished),
or a limit, a cancellation or repeated malformed calls end it. Each exit is an exception
(see ``exits``) turned into one ``Final`` event. Events go to ``on_event`` from the calling
thread; the session file gets every message and event as it happens.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from app.agent import toolbox
from app.agent.answers import AnswerMixin
from app.agent.budget import BudgetLimits, ContextBudget, cut_middle
from app.agent.checks import CheckState, find_check
from app.agent.direct_edit import fresh_sampling
from app.agent.editformat import agent_rule
from app.agent.example_check import example_base, examples_check
from app.agent.exits import AgentExit, Cancelled, EngineFailed, Finished, FormatGiveUp, StepLimit
from app.agent.finish import (
    TurnFacts,
    asks_for_change,
    premature,
)
from app.agent.instructions import load_instructions
from app.agent.judging import JudgeMixin
from app.agent.mentions import attach_files
from app.agent.prompts import FORMAT_FEEDBACK, system_prompt
from app.agent.repair import RepairMixin
from app.agent.repeats import RepeatGuard
from app.agent.replyclean import embedded_calls, strip_markup
from app.agent.repomap import list_files, repo_map
from app.agent.shell_setup import shell_options, unconfined_notice
from app.agent.summary import summarize
from app.agent.tokens import counter_for
from app.agent.toolcalls import ParsedReply, ToolCall, parse_reply
from app.agent.workspace import TrackingJournal, register_files, workspace_diff
from app.config import Config
from app.events import (
    AgentEvent,
    AssistantDelta,
    AssistantMessage,
    EngineStatsEvent,
    ErrorEvent,
    Final,
    Notice,
    SessionStarted,
    ToolCallEvent,
    ToolResultEvent,
)
from app.loopwatch import LoopWatch
from app.session import Session
from app.wire import wire_for
from engine.types import (
    CancelToken,
    DoneEvent,
    Engine,
    GenerateRequest,
    LinkedCancel,
    SamplingParams,
    StatsEvent,
    TokenEvent,
)
from tools.base import Tool, ToolContext, ToolResult
from tools.permissions_types import Approver
from tools.secret_files import is_secret_path
from tools.undo import UndoReport

MAX_FORMAT_FAILURES = 3
REPLY_TOKENS = 4096  # room for a whole-file write_file of a small file (app.agent.editformat)
TOOL_OUTPUT_CHARS = 12_000


class Agent(RepairMixin, JudgeMixin, AnswerMixin):
    def __init__(self, engine: Engine, root: Path, *, config: Config, approver: Approver,
                 on_event: Callable[[AgentEvent], None], session: Session | None = None,
                 tools: list[Tool] | None = None, insist: bool = False, check: str | None = None) -> None:
        self.engine, self.root, self.config = engine, Path(root).resolve(), config
        self.insist = insist  # a job, not a chat: push back on answers that are not done (app.agent.finish)
        self.check_flag = check  # `tau run --check CMD`; else found per turn (app.agent.checks)
        self._facts = TurnFacts()
        self._check: CheckState | None = None
        self._example_base: dict[str, str] = {}  # a job judged by docstring examples: its files at the start
        self._repeats = RepeatGuard()
        self._wants_change = False
        self._task = ""
        self.approver, self.on_event = approver, on_event
        self.tools = toolbox.default_tools() if tools is None else list(tools)
        self._by_name = {t.name: t for t in self.tools}
        self._schemas = toolbox.tool_schemas(self.tools)
        self.wire = wire_for(engine.info)  # the model family's prompt, call format and stop strings
        self.policy = toolbox.make_policy(config.mode, approver)
        self._mode = config.mode
        self.undo_journal = toolbox.make_undo_journal(self.root)
        self.journal = TrackingJournal(self.root, self.undo_journal)
        self.context_limit = int(engine.info.n_ctx)
        self._count = counter_for(engine)
        limits = BudgetLimits(self.context_limit, min(REPLY_TOKENS, self.context_limit // 4))
        self.budget = ContextBudget(limits, self._render, self._count, self._summarize)
        self.session = session or Session.create(self.root, engine.info.name, config.mode)
        self.session_id = self.session.id
        self._started = False
        self._cancel = CancelToken()
        self._failures = 0
        self._tokens_cache: tuple[object, int] = (None, 0)
        history = [m for m in self.session.history if m.get("role") != "system"]
        self.messages: list[dict] = [{"role": "system", "content": self._system_prompt()}, *history]
        self.session.reset(self.messages)

    # -- public API ----------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        self.policy.mode = value
        self._mode = value

    @property
    def context_tokens(self) -> int:
        """Tokens of the conversation as the next prompt (cached until the conversation changes)."""
        key = (id(self.messages), len(self.messages), id(self.messages[-1]))
        if self._tokens_cache[0] != key:
            self._tokens_cache = (key, self.budget.tokens(self.messages))
        return self._tokens_cache[1]

    def run_turn(self, text: str, cancel: CancelToken | None = None) -> Final:
        self._cancel = cancel or CancelToken()
        if not self._started:
            self._started = True
            self._emit(SessionStarted(self.session_id, str(self.root), self.engine.info.name, self.mode))
            if "run_shell" in self._by_name and (unconfined := unconfined_notice(self.config, self.mode)):
                self._emit(Notice(unconfined, {"shell": "unconfined"}))
        self.undo_journal.begin_turn()
        self._facts, self._repeats = TurnFacts(), RepeatGuard()
        self._wants_change = self.insist or asks_for_change(text)
        self._task = text
        files = list_files(self.root)
        content, attached = self._user_content(text, files)
        self._add({"role": "user", "content": content})
        register_files(self.engine, self.root, attached)
        self._failures = 0
        self._check = None
        if self.insist:
            instructions = load_instructions(self.root)
            check = find_check(self.root, text, instructions.text if instructions else "", files, self.check_flag)
            self._check = CheckState(check) if check else None
            # no test command: the docstring examples of what the turn changes judge it (app.agent.example_check)
            self._example_base = example_base(self.root, files) if check is None else {}
            if self._example_base:
                self._check = CheckState(examples_check())
        try:
            budget = max(1, self.config.max_steps)
            budget -= self._repair_rounds(files, budget) if self.insist else 0  # app.agent.repair
            for _ in range(max(1, budget)):
                self.step()
            raise StepLimit(f"stopped after {self.config.max_steps} steps without a final answer")
        except AgentExit as e:
            final = e.final()
        except Exception as e:  # a bug must not kill the front end: report it as a failed turn
            final = Final("failed", f"internal error: {type(e).__name__}: {e}")
            self._emit(ErrorEvent(final.message, traceback.format_exc()))
        final = self._judged(final)
        self._emit(final)
        return final

    def next_prompt(self, text: str) -> str:
        """The prompt a turn started now with ``text`` would first send (computed while it is typed)."""
        content, _ = self._user_content(text, list_files(self.root))
        return self._render([*self.messages, {"role": "user", "content": content}])

    def _user_content(self, text: str, files: list[str]) -> tuple[str, list[str]]:
        """The user message for ``text``: the files it names attached (a job's first message in a
        tiny workspace gets all of them); and the attached paths."""
        first = not any(m.get("role") == "user" for m in self.messages)
        return attach_files(self.root, text, files, whole_small_workspace=self.insist and first)

    def undo(self) -> UndoReport:
        """Undo the last turn's edits; files changed since the agent wrote them are kept and named."""
        report: UndoReport = self.undo_journal.undo_report()
        self.session.write({"type": "undo", "paths": list(report.restored), "kept": [k.path for k in report.kept]})
        return report

    def diff(self) -> str:
        return workspace_diff(self.root, self.journal)

    def clear(self) -> None:
        self.messages = self.messages[:1]
        self.session.reset(self.messages)

    def compact(self) -> None:
        self.messages, notes = self.budget.fit(self.messages, force_summary=True)
        self.session.reset(self.messages)
        self._emit(Notice("compacted the conversation: " + "; ".join(notes or ["nothing to do"])))

    # -- one step --------------------------------------------------------------------------
    def step(self) -> None:
        if self._cancel.cancelled:
            raise Cancelled("cancelled by the user")
        self.messages, notes = self.budget.fit(self.messages)
        if notes:
            self.session.reset(self.messages)
            self._emit(Notice("context: " + "; ".join(notes)))
        reply, finish = self.query()
        reply = strip_markup(reply)  # template markers never reach the history or the answer
        parsed = parse_reply(reply, self._by_name, self.wire)
        if not parsed.calls and not parsed.errors:
            prose, stray = embedded_calls(parsed.content, self._by_name)
            if stray:  # a call written as bare JSON inside prose is still a call
                parsed = ParsedReply(prose, stray, [])
        if not parsed.calls and not parsed.errors:
            shown, new_code = self._judge_code(parsed.content)
            if shown:  # an answer that shows a fix instead of making it, or skips the check: do it
                self._facts.nudges += 1
                self._emit(AssistantMessage(parsed.content))
                self._emit(Notice("before accepting the answer: " + ", ".join(
                    f"run {c.arguments['command']}" if c.name == "run_shell" else f"edit {c.arguments['path']}"
                    for c in shown)))
                self.execute(ParsedReply(parsed.content, shown, []))
                return
            self._add({"role": "assistant", "content": reply.strip()})
            self._emit(AssistantMessage(parsed.content))
            nudge = (self._empty_nudge(parsed.content) or (premature(self._facts, new_code, example=self._edit_example(), files=tuple(list_files(self.root)[:8]))
                      if self.insist else None) or self._promise_nudge(parsed.content)
                     or self._rename_gate(self._task) or self._check_gate())
            if nudge is None:
                raise Finished(parsed.content)
            self._facts.pushed_back(parsed.content)
            self._emit(Notice(f"not done yet: {nudge}"))
            self._add({"role": "user", "content": nudge})
            return
        if parsed.content:
            self._emit(AssistantMessage(parsed.content))
        if not parsed.calls:
            self._malformed(reply, parsed, finish)
            return
        self._failures = 0
        if self.insist and not self._facts.edits and not any(self._by_name[c.name].kind == "edit" for c in parsed.calls):
            shown = self._shown_edit_calls(parsed.content)  # a fix shown next to, say, a test run: make it first
            if shown:
                self._emit(Notice("applying the code shown in the message: " + ", ".join(c.arguments["path"] for c in shown)))
                parsed = ParsedReply(parsed.content, shown + parsed.calls, parsed.errors)
        self.execute(parsed)

    def query(self) -> tuple[str, str]:
        prompt = self._render(self.messages)
        used = self._count(prompt)
        room = min(self.budget.limits.reply_tokens, self.context_limit - used)
        if room < 16:
            raise EngineFailed(f"the context window ({self.context_limit} tokens) is too small for this prompt")
        sampling = SamplingParams(temperature=self.config.temperature, top_p=self.config.top_p,
                                  temper_last=self.config.temperature_last)
        if self._facts.same_answers:  # a greedy (or cold) model repeats a pushed-back answer verbatim: sample past it
            sampling = fresh_sampling(self.config.temperature, self.config.top_p, self._facts.same_answers)
        request = GenerateRequest(prompt, max_tokens=room, sampling=sampling, stop=self.wire.stop, spec=self.config.spec)
        done: DoneEvent | None = None
        watch, stop = LoopWatch(allow=prompt), LinkedCancel(self._cancel)
        for ev in self.engine.stream(request, stop):  # read to the end: never abandon a stream
            if isinstance(ev, TokenEvent):
                self._emit(AssistantDelta(ev.text))
                if watch.feed(ev.text):
                    stop.cancel()
            elif isinstance(ev, StatsEvent):
                self._emit(EngineStatsEvent(ev.stats, False, used, self.context_limit))
            elif isinstance(ev, DoneEvent):
                done = ev
                self._emit(EngineStatsEvent(ev.stats, True, used + ev.stats.completion_tokens, self.context_limit))
        if done is None:
            raise EngineFailed("the engine stream ended without a result")
        if watch.period and not self._cancel.cancelled:
            self._emit(Notice(watch.describe()))
            return watch.kept(done.text), "loop"
        if done.finish_reason == "cancelled" or self._cancel.cancelled:
            if done.text.strip():
                self._add({"role": "assistant", "content": done.text + "\n[interrupted by the user]"})
            raise Cancelled("cancelled by the user")
        if done.finish_reason == "error":
            raise EngineFailed(f"engine error: {done.error}")
        return done.text, done.finish_reason

    def execute(self, parsed: ParsedReply) -> None:
        ids = [f"call_{self._next_id()}" for _ in parsed.calls]
        calls = [{"id": i, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                 for i, c in zip(ids, parsed.calls, strict=True)]
        self._add({"role": "assistant", "content": parsed.content, "tool_calls": calls})
        for call_id, call in zip(ids, parsed.calls, strict=True):
            if self._cancel.cancelled:
                self._add({"role": "tool", "tool_call_id": call_id, "name": call.name, "content": "cancelled"})
                raise Cancelled("cancelled by the user")
            self._emit(ToolCallEvent(call_id, call.name, call.arguments))
            result = self._run_tool(call)
            if not result.ok and self._repeats.failed(call, result.output) >= 2:
                result = replace(result, output=self._change_tack(call, result.output))
            self._emit(ToolResultEvent(call_id, call.name, result.ok, result.output, result.diff,
                                       result.exit_code, result.command))
            kind = self._by_name[call.name].kind
            if kind == "edit" and result.ok:
                self._facts.edited()
                if self._check is not None:
                    self._check.edited()
            elif kind == "shell":
                self._facts.ran(result.command, result.exit_code, result.output)
                if self._check is not None:
                    self._check.ran(result.command, result.exit_code, result.output)
            content = cut_middle(result.output, TOOL_OUTPUT_CHARS) or "(no output)"
            self._add({"role": "tool", "tool_call_id": call_id, "name": call.name, "content": content})
            if kind in ("read", "edit"):
                # a secret file's text never goes to the drafter (a remote engine would get it)
                register_files(self.engine, self.root, [p for p in result.paths if not is_secret_path(p)])
        for error in parsed.errors:
            self._add({"role": "tool", "name": "error", "content": f"Error: {error}"})

    def _malformed(self, reply: str, parsed: ParsedReply, finish: str) -> None:
        self._failures += 1
        error = parsed.errors[-1]
        if finish == "length":
            error += " (the reply was cut off by the token limit; make smaller calls)"
        elif finish == "loop":
            error += " (the reply repeated the same text over and over and was stopped; write each part once)"
        self._add({"role": "assistant", "content": reply.strip()})
        self._emit(Notice(f"malformed tool call ({self._failures}/{MAX_FORMAT_FAILURES}): {error}"))
        if self._failures >= MAX_FORMAT_FAILURES:
            raise FormatGiveUp(f"gave up after {self._failures} malformed tool calls in a row; last: {error}")
        example = self.wire.call_text(self.tools[0].name, {}) if self.tools else "{}"
        self._add({"role": "user", "content": FORMAT_FEEDBACK.format(error=error, example=example)})

    def _run_tool(self, call: ToolCall) -> ToolResult:
        tool = self._by_name[call.name]
        ctx = ToolContext(root=self.root, policy=self.policy, journal=self.journal, cancel=self._cancel,
                          approver=self.approver, extra={"shell": shell_options(self.config, self.mode)})
        try:
            return tool.run(call.arguments, ctx)
        except Exception as e:  # a tool bug becomes an error the model can read
            return ToolResult(False, f"error: {call.name} failed: {type(e).__name__}: {e}")

    # -- helpers ----------------------------------------------------------------------------
    def _next_id(self) -> int:
        self._ids = getattr(self, "_ids", 0) + 1
        return self._ids

    def _emit(self, ev: AgentEvent) -> None:
        self.session.event(ev)
        self.on_event(ev)

    def _add(self, msg: dict) -> None:
        self.messages.append(msg)
        self.session.message(msg)

    def _render(self, messages: list[dict]) -> str:
        return self.engine.chat_prompt(messages)  # the tool schemas are in the system prompt's fixed part

    def _system_prompt(self) -> str:
        rmap = repo_map(self.root)
        if rmap:
            self.engine.register_context("repomap", rmap)
        text = system_prompt(str(self.root), self.tools, rmap, load_instructions(self.root), self.wire, self._schemas)
        rule = agent_rule([t.name for t in self.tools])  # which edit tool for which file size
        return text.replace("\n- Read a file before you edit it.", "\n- Read a file before you edit it." + rule, 1) \
            if rule and "\n- Read a file before you edit it." in text else text + rule

    def _summarize(self, messages: list[dict]) -> str:
        return summarize(self.engine, messages, self._count, self._cancel)
