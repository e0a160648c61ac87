"""``tau --plain``: a prompt-toolkit line interface on the session layer (app.controller).

History (state dir), completion of slash commands and file paths, pygments-coloured
diffs, y/a/n approval prompts. The session runs each turn in a thread; its approval
requests come back to the main thread through a queue, so that only the main thread
reads the terminal. Ctrl+C cancels a turn; a second Ctrl+C (or Ctrl+D at the prompt) quits.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter, WordCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from pygments import highlight
from pygments.formatters import TerminalFormatter
from pygments.lexers import DiffLexer

from app.config import Config, state_dir
from app.controller import commands, results
from app.controller.model_session import LoadProgress, ModelSession, SessionSetup
from app.controller.results import Problem, QuitRequested, SessionDiff, ThemeSet, Undone
from app.controller.statsfmt import status_fields, status_line
from app.controller.textfmt import clip_lines, first_line
from app.controller.visible import thinking_of, visible_text
from app.events import (
    AgentEvent,
    AssistantDelta,
    AssistantMessage,
    ErrorEvent,
    Final,
    Notice,
    ToolCallEvent,
    ToolResultEvent,
)
from tools.permissions_types import ApprovalDecision, ApprovalRequest

DIM, RED, GREEN, YELLOW, BOLD, RESET = "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[1m", "\x1b[0m"


def _settled_thinking(raw: str) -> str:
    """The thinking so far, less a tail that may be the start of ``</think>``."""
    thought = thinking_of(raw)
    if "</think>" not in raw:
        for n in range(min(len(thought), 8), 0, -1):
            if "</think>".startswith(thought[-n:]):
                return thought[:-n]
    return thought


def color_diff(diff: str, color: bool = True) -> str:
    if not color:
        return diff.rstrip("\n")
    return highlight(diff, DiffLexer(), TerminalFormatter()).rstrip("\n")


class TauCompleter(Completer):
    """Slash commands (and their arguments) at the start of the line; file paths elsewhere."""

    def __init__(self, root: Path, themes: Iterable[str] = ()) -> None:
        self.root = root
        self.themes = list(themes)
        self.paths = PathCompleter(get_paths=lambda: [str(root)], expanduser=True)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/"):
            if " " not in text:
                for name in commands.complete(text):
                    yield Completion(name, start_position=-len(text))
                return
            head, _, arg = text.partition(" ")
            options = {"/mode": commands.MODES, "/theme": self.themes}.get(head, ())
            yield from WordCompleter(list(options), WORD=True).get_completions(Document(arg), complete_event)
            return
        word = document.get_word_before_cursor(WORD=True)
        if not word:
            return
        yield from self.paths.get_completions(Document(word), complete_event)


class PlainUI:
    """Renders a ModelSession on a terminal, line by line; only the main thread reads the terminal."""

    def __init__(self, cfg: Config, root: Path, setup: SessionSetup, *, out: TextIO | None = None,
                 session: PromptSession | None = None, history: History | None = None, color: bool = True) -> None:
        self.root = root
        self.out = out or sys.stdout
        self.color = color
        self.approvals: queue.Queue[tuple[ApprovalRequest, Future[ApprovalDecision]]] = queue.Queue()
        self.model = ModelSession(
            cfg, root, setup, on_event=self.on_event, approver=self.approver, log_path=state_dir() / "plain.log"
        )
        self._raw = ""
        self._shown = ""  # the visible part of the reply streamed so far
        self._thought = ""  # the thinking (Qwen3's <think>) streamed so far, shown dimmed
        self._streamed = False
        self._lock = threading.Lock()
        if history is None:
            history = InMemoryHistory()
            if setup.persist:
                try:
                    path = state_dir() / "plain_history"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    history = FileHistory(str(path))
                except OSError:
                    pass
        self.session = session or PromptSession(history=history)
        self.completer = TauCompleter(root, tuple(self.model.themes))
        self._at_message = False  # the message prompt is up (an approval's answer is not a message)
        self.session.default_buffer.on_text_changed += self._typed

    # ---- output ------------------------------------------------------------------------
    def c(self, code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def write(self, text: str = "", end: str = "\n") -> None:
        with self._lock:
            self.out.write(text + end)
            self.out.flush()

    # ---- agent events (agent thread) ---------------------------------------------------
    def on_event(self, ev: AgentEvent) -> None:
        if isinstance(ev, AssistantDelta):
            self._stream(self._raw + ev.text)
        elif isinstance(ev, AssistantMessage):
            self._stream(ev.content)
            self._end_stream()
        elif isinstance(ev, ToolCallEvent):
            self._end_stream()
            arg = ev.arguments.get("command") or ev.arguments.get("path") or ""
            self.write(self.c(DIM, f"⚙ {ev.name} {arg}".rstrip()))
        elif isinstance(ev, ToolResultEvent):
            mark = self.c(GREEN, "✓") if ev.ok else self.c(RED, "✗")
            if ev.command is not None:
                self.write(f"{mark} $ {ev.command}  (exit {ev.exit_code})")
                if ev.output.strip():
                    self.write(clip_lines(ev.output, 40))
            elif ev.diff:
                self.write(f"{mark} {ev.name}")
                self.write(color_diff(ev.diff, self.color))
            else:
                self.write(f"{mark} {ev.name} {first_line(ev.output)[:120]}".rstrip())
        elif isinstance(ev, ErrorEvent):
            self._end_stream()
            self.write(self.c(RED, f"error: {ev.message}"))
        elif isinstance(ev, Notice):
            self._end_stream()
            self.write(self.c(DIM, ev.message))
        elif isinstance(ev, Final):
            self._end_stream()

    def _stream(self, raw: str) -> None:
        """Print what became visible; text that visible_text may still take back waits."""
        self._raw = raw
        thought = _settled_thinking(raw)
        if thought.startswith(self._thought) and len(thought) > len(self._thought):
            if not self._thought:
                self.write(self.c(DIM, "thinking: "), end="")
            self.write(self.c(DIM, thought[len(self._thought) :]), end="")
            self._thought = thought
            self._streamed = True
        visible = visible_text(raw)
        if visible.strip() and self._thought and not self._shown:
            self.write()  # the answer starts on its own line below the thinking
        if visible.startswith(self._shown) and len(visible) > len(self._shown):
            self.write(visible[len(self._shown) :], end="")
            self._shown = visible
            self._streamed = True

    def _end_stream(self) -> None:
        if self._streamed:
            self.write()
        self._raw = ""
        self._shown = ""
        self._thought = ""
        self._streamed = False

    def approver(self, request: ApprovalRequest) -> ApprovalDecision:
        """Called on the agent's thread: hand the question to the main thread and wait."""
        fut: Future[ApprovalDecision] = Future()
        self.approvals.put((request, fut))
        return fut.result()

    def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask on the terminal (main thread)."""
        self.write(self.c(YELLOW + BOLD, request.summary))
        if request.diff:
            self.write(color_diff(request.diff, self.color))
        elif request.command:
            self.write(self.c(BOLD, "$ " + request.command))
        question = {"edit": "apply this edit", "shell": "run this command"}.get(request.kind, "allow this")
        while True:
            answer = self.session.prompt(f"{question}? [y]es / [a]lways / [n]o: ").strip().lower()
            if answer in ("y", "yes"):
                return ApprovalDecision(True)
            if answer in ("a", "always"):
                return ApprovalDecision(True, always=True)
            if answer in ("n", "no"):
                note = self.session.prompt("note to the model (enter for none): ").strip()
                return ApprovalDecision(False, note=note)

    # ---- main loop -------------------------------------------------------------------------
    def start(self) -> bool:
        if self.model.engine is None:
            self.write(self.c(DIM, "loading model…"))
        shown = [-1]

        def progress(p: LoadProgress) -> None:
            if p.fraction is None:
                self.write(self.c(DIM, p.text))
                return
            pct = int(p.fraction * 100)
            if pct // 10 != shown[0] // 10:  # one line per 10%
                shown[0] = pct
                self.write(self.c(DIM, f"{p.text} {pct}%"))

        problem = self.model.open(progress)
        if problem is not None:
            self.write(self.c(RED, "error: " + problem.message))
            return False
        engine = self.model.engine
        assert engine is not None
        info = engine.info
        draft = f" + {info.draft_name}" if info.draft_name else ""
        self.write(self.c(BOLD, f"τ tau  {self.root.name}  {info.name}{draft}  mode {self.model.mode}"))
        self.write(self.c(DIM, "/help for commands · ctrl+c cancels · ctrl+d quits"))
        return True

    def run_turn(self, text: str) -> Final:
        turn = self.model.start_turn(text)
        interrupted = False
        while not turn.done.is_set():
            try:
                try:
                    req, fut = self.approvals.get(timeout=0.05)
                except queue.Empty:
                    continue
                fut.set_result(self.ask(req))
            except (KeyboardInterrupt, EOFError):
                if interrupted:
                    raise KeyboardInterrupt from None
                interrupted = True
                self.model.cancel()
                self.write(self.c(YELLOW, "\ncancelling… (ctrl+c again quits)"))
                while not self.approvals.empty():
                    _req, fut = self.approvals.get_nowait()
                    fut.set_result(ApprovalDecision(False, note="cancelled by the user"))
        outcome = turn.outcome
        assert outcome is not None
        if outcome.error:
            self.write(self.c(RED, "error: " + outcome.error))
            return outcome.final
        if self.model.last_stats is not None:
            ctx_tokens, ctx_limit = self.model.context
            fields = status_fields(self.model.last_stats, context_tokens=ctx_tokens, context_limit=ctx_limit)
            self.write(self.c(DIM, status_line(fields)))
        final = outcome.final
        if final.status != "done":
            self.write(self.c(YELLOW if final.status == "cancelled" else RED, f"[{final.status}] {final.message}".rstrip()))
        return final

    def command(self, name: str, arg: str) -> bool:
        """Run a slash command and print its result; False means quit."""
        result = self.model.command(name, arg)
        if isinstance(result, QuitRequested):
            return False
        if isinstance(result, SessionDiff) and result.diff.strip():
            self.write(color_diff(result.diff, self.color))
        elif isinstance(result, ThemeSet):
            self.write(f"{results.text(result)} (used by the full-screen TUI)")
            if result.save_error:
                self.write(self.c(RED, "error: " + result.save_error))
        elif isinstance(result, Problem):
            self.write(self.c(RED if result.severity == "error" else YELLOW, result.message))
        elif isinstance(result, Undone) and (result.kept or result.failed):
            self.write(self.c(YELLOW, results.text(result)))
        else:
            self.write(results.text(result))
        return True

    def _typed(self, buffer: Buffer) -> None:
        if self._at_message:
            self.model.typing(buffer.text)  # a pause computes the message's prompt ahead, as in the TUI

    def loop(self) -> int:
        if not self.start():
            return 1
        while True:
            self._at_message = True
            try:
                text = self.session.prompt(
                    "› ", completer=self.completer, complete_while_typing=True, multiline=False
                )
            except KeyboardInterrupt:
                continue
            except EOFError:
                return 0
            finally:
                self._at_message = False
            if not text.strip():
                continue
            parsed = commands.parse(text)
            try:
                if parsed is not None:
                    if not self.command(*parsed):
                        return 0
                    continue
                self.run_turn(text)
            except KeyboardInterrupt:
                return 130
            except Exception as e:
                self.write(self.c(RED, "error: " + self.model.errors.exception("command failed", e)))


def run(cfg: Config, *, root: Path, resume: str | None = None) -> int:
    ui = PlainUI(cfg, root, SessionSetup(resume=resume))
    try:
        return ui.loop()
    finally:
        ui.model.close()
