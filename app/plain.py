"""``tau --plain``: a prompt-toolkit line interface on the same agent loop as the TUI.

History (state dir), completion of slash commands and file paths, pygments-coloured
diffs, y/a/n approval prompts. The agent runs each turn in a thread; its approval
requests come back to the main thread through a queue, so that only the main thread
reads the terminal. Ctrl+C cancels a turn; a second Ctrl+C (or Ctrl+D at the prompt) quits.
"""

from __future__ import annotations

import queue
import sys
import threading
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter, WordCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from pygments import highlight
from pygments.formatters import TerminalFormatter
from pygments.lexers import DiffLexer

from app.config import Config, save_setting, state_dir
from app.events import (
    AgentEvent,
    AssistantDelta,
    AssistantMessage,
    EngineStatsEvent,
    ErrorEvent,
    Final,
    Notice,
    ToolCallEvent,
    ToolResultEvent,
)
from app.tui import commands
from app.tui.statsfmt import SessionStats, status_fields, status_line
from engine.types import CancelToken, Engine, GenStats
from tools.permissions_types import ApprovalDecision, ApprovalRequest

DIM, RED, GREEN, YELLOW, BOLD, RESET = "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[1m", "\x1b[0m"


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
    def __init__(
        self,
        cfg: Config,
        root: Path,
        *,
        engine: Engine | None = None,
        engine_factory: Callable[[Callable[..., None]], Engine] | None = None,
        agent_factory: Any = None,
        resume: str | None = None,
        out: TextIO | None = None,
        session: PromptSession | None = None,
        history: History | None = None,
        color: bool = True,
        persist: bool = True,
    ) -> None:
        self.cfg = cfg
        self.root = root
        self.engine = engine
        self.engine_factory = engine_factory
        self.agent_factory = agent_factory
        self.resume = resume
        self.out = out or sys.stdout
        self.color = color
        self.persist = persist
        self.log_path = state_dir() / "plain.log"
        self.approvals: queue.Queue[tuple[ApprovalRequest, Future[ApprovalDecision]]] = queue.Queue()
        self.stats = SessionStats()
        self.last_stats: GenStats | None = None
        self.ctx = (0, 0)
        self._raw = ""
        self._printed = 0
        self._lock = threading.Lock()
        try:
            from themes import load_themes

            theme_names = list(load_themes()[0])
        except Exception:
            theme_names = []
        self.theme_names = theme_names
        if history is None:
            history = InMemoryHistory()
            if persist:
                try:
                    path = state_dir() / "plain_history"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    history = FileHistory(str(path))
                except OSError:
                    pass
        self.session = session or PromptSession(history=history)
        self.completer = TauCompleter(root, theme_names)
        self.agent: Any = None

    # ---- output ------------------------------------------------------------------------
    def c(self, code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def write(self, text: str = "", end: str = "\n") -> None:
        with self._lock:
            self.out.write(text + end)
            self.out.flush()

    def error(self, what: str, exc: BaseException) -> None:
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(f"{what}: {exc!r}\n" + "".join(traceback.format_exception(exc)) + "\n")
            where = f"  (traceback in {self.log_path})"
        except OSError:
            where = ""
        self.write(self.c(RED, f"error: {what}: {exc}{where}"))

    # ---- agent events (agent thread) ---------------------------------------------------
    def on_event(self, ev: AgentEvent) -> None:
        if isinstance(ev, AssistantDelta):
            self._raw += ev.text
            visible = self._raw.split("<tool_call>", 1)[0]
            hold = visible.rfind("<")
            if hold >= 0 and "<tool_call>".startswith(visible[hold:]):
                visible = visible[:hold]
            if len(visible) > self._printed:
                self.write(visible[self._printed :], end="")
                self._printed = len(visible)
        elif isinstance(ev, AssistantMessage):
            if self._printed == 0 and ev.content.strip():
                self.write(ev.content, end="")
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
                    self.write(_clip(ev.output))
            elif ev.diff:
                self.write(f"{mark} {ev.name}")
                self.write(color_diff(ev.diff, self.color))
            else:
                first = ev.output.strip().splitlines()[:1]
                self.write(f"{mark} {ev.name} {first[0][:120] if first else ''}".rstrip())
        elif isinstance(ev, EngineStatsEvent):
            if ev.final:
                self.stats.add(ev.stats)
                self.last_stats = ev.stats
                self.ctx = (ev.context_tokens, ev.context_limit)
        elif isinstance(ev, ErrorEvent):
            self._end_stream()
            self.write(self.c(RED, f"error: {ev.message}"))
        elif isinstance(ev, Notice):
            self._end_stream()
            self.write(self.c(DIM, ev.message))
        elif isinstance(ev, Final):
            self._end_stream()

    def _end_stream(self) -> None:
        if self._printed or self._raw.split("<tool_call>", 1)[0].strip():
            self.write()
        self._raw = ""
        self._printed = 0

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
        try:
            if self.engine is None:
                self.write(self.c(DIM, "loading model…"))
                factory = self.engine_factory
                if factory is None:
                    from app.engine_factory import open_engine

                    def factory(notify: Callable[..., None]) -> Engine:
                        last = [-1]

                        def progress(message: str, fraction: float) -> None:
                            pct = int(fraction * 100)
                            if pct // 10 != last[0] // 10:  # one line per 10%
                                last[0] = pct
                                notify(f"{message} {pct}%")

                        return open_engine(self.cfg, notify=notify, progress=progress)

                def notify(*args: Any, **_kw: Any) -> None:
                    text = " ".join(str(a) for a in args)
                    if text:
                        self.write(self.c(DIM, text))

                self.engine = factory(notify)
            make = self.agent_factory
            if make is None:
                from app.tui.runtime import default_agent_factory as make
            self.agent = make(self.engine, self.root, self.cfg, self.approver, self.on_event, self.resume)
        except Exception as e:
            self.error("could not start the model", e)
            return False
        info = self.engine.info
        draft = f" + {info.draft_name}" if info.draft_name else ""
        self.write(self.c(BOLD, f"τ tau  {self.root.name}  {info.name}{draft}  mode {self.agent.mode}"))
        self.write(self.c(DIM, "/help for commands · ctrl+c cancels · ctrl+d quits"))
        return True

    def run_turn(self, text: str) -> Final:
        cancel = CancelToken()
        self.stats.start_turn(text)
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["final"] = self.agent.run_turn(text, cancel)
            except Exception as e:
                box["error"] = e

        t = threading.Thread(target=work, name="tau-turn", daemon=True)
        t.start()
        interrupted = False
        while t.is_alive():
            try:
                try:
                    req, fut = self.approvals.get(timeout=0.05)
                except queue.Empty:
                    continue
                fut.set_result(ApprovalDecision(False, note="cancelled") if cancel.cancelled else self.ask(req))
            except (KeyboardInterrupt, EOFError):
                if interrupted:
                    raise KeyboardInterrupt from None
                interrupted = True
                cancel.cancel()
                self.write(self.c(YELLOW, "\ncancelling… (ctrl+c again quits)"))
                while not self.approvals.empty():
                    _req, fut = self.approvals.get_nowait()
                    fut.set_result(ApprovalDecision(False, note="cancelled by the user"))
        t.join()
        if "error" in box:
            self.error("the turn failed", box["error"])
            return Final("failed", str(box["error"]))
        final: Final = box["final"]
        if self.last_stats is not None:
            fields = status_fields(self.last_stats, context_tokens=self.ctx[0], context_limit=self.ctx[1])
            self.write(self.c(DIM, status_line(fields)))
        if final.status != "done":
            self.write(self.c(YELLOW if final.status == "cancelled" else RED, f"[{final.status}] {final.message}".rstrip()))
        return final

    def command(self, name: str, arg: str) -> bool:
        """Run a slash command; False means quit."""
        full = commands.resolve(name)
        agent = self.agent
        if full is None:
            self.write(f"unknown command /{name}; /help lists them")
        elif full == "quit":
            return False
        elif full == "help":
            self.write(commands.help_text())
        elif full == "undo":
            files = agent.undo()
            self.write("restored " + ", ".join(files) if files else "nothing to undo")
        elif full == "diff":
            d = agent.diff()
            self.write(color_diff(d, self.color) if d.strip() else "no changes")
        elif full == "clear":
            agent.clear()
            self.write("conversation cleared")
        elif full == "compact":
            agent.compact()
        elif full == "model":
            info = self.engine.info if self.engine is not None else None
            if info is not None:
                self.write(f"{info.name} ({info.quant}, ctx {info.n_ctx})  draft: {info.draft_name or 'none'}")
        elif full == "mode":
            if arg and arg not in commands.MODES:
                self.write("modes: " + ", ".join(commands.MODES))
            else:
                if arg:
                    agent.mode = arg
                self.write(f"mode: {agent.mode}")
        elif full == "stats":
            self.write(self.stats.report())
        elif full == "sessions":
            from app.session import list_sessions

            for s in list_sessions()[:30]:
                self.write(f"{s.id}  {s.title}")
        elif full == "theme":
            if arg in self.theme_names:
                if self.persist:
                    save_setting("theme", arg)
                self.write(f"theme: {arg} (used by the full-screen TUI)")
            else:
                self.write("themes: " + ", ".join(self.theme_names))
        return True

    def loop(self) -> int:
        if not self.start():
            return 1
        while True:
            try:
                text = self.session.prompt(
                    "› ", completer=self.completer, complete_while_typing=True, multiline=False
                )
            except KeyboardInterrupt:
                continue
            except EOFError:
                return 0
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
                self.error("command failed", e)


def _clip(text: str, limit: int = 40) -> str:
    lines = text.rstrip("\n").splitlines()
    if len(lines) > limit:
        lines = lines[:limit] + [f"… {len(lines) - limit} more lines"]
    return "\n".join(lines)


def run(cfg: Config, *, root: Path, resume: str | None = None) -> int:
    ui = PlainUI(cfg, root, resume=resume)
    try:
        return ui.loop()
    finally:
        if ui.engine is not None:
            try:
                ui.engine.close()
            except Exception:
                pass
