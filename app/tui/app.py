"""The Textual app and its factory (shared by ``tau`` and the tests).

Threads: the engine is opened and each turn of the agent runs in ``@work(thread=True)``
workers. The agent's events come back with ``post_message``; the approver (called on the
agent's thread) shows the approval dialog with ``call_from_thread`` and waits on a Future.
Widgets are only touched on the app's thread.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Footer, Label, LoadingIndicator, ProgressBar, Static

from app.config import Config, save_setting, state_dir
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
from app.tui import commands
from app.tui.runtime import (
    AgentFactory,
    AgentLike,
    EngineFactory,
    default_agent_factory,
    default_engine_factory,
)
from app.tui.screens import ApprovalScreen, StatsScreen, TextScreen
from app.tui.statsfmt import SessionStats
from app.tui.theme import textual_themes
from app.tui.widgets import (
    AssistantView,
    Conversation,
    DiffCard,
    NoticeLine,
    PromptArea,
    StatusBar,
    Suggestions,
    ToolCard,
    UserMessage,
    visible_assistant_text,
)
from engine.types import CancelToken, Engine
from themes import DEFAULT_THEME
from tools.permissions_types import ApprovalDecision, ApprovalRequest

log = logging.getLogger("tau.tui")

STREAM_FPS = 12  # markdown refreshes per second while streaming
HISTORY_MAX = 500


# ---- messages from worker threads ----------------------------------------------------


class AgentEventMessage(Message):
    def __init__(self, event: AgentEvent) -> None:
        super().__init__()
        self.event = event


class TurnDone(Message):
    def __init__(self, final: Final, error: str = "") -> None:
        super().__init__()
        self.final = final
        self.error = error


class EngineReady(Message):
    def __init__(self, engine: Engine, agent: AgentLike) -> None:
        super().__init__()
        self.engine = engine
        self.agent = agent


class EngineFailed(Message):
    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message


class LoadProgress(Message):
    def __init__(self, text: str, fraction: float | None) -> None:
        super().__init__()
        self.text = text
        self.fraction = fraction


class TauApp(App[int]):
    """tau's full-screen session."""

    TITLE = "tau"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+c", "interrupt", "cancel/quit", priority=True),
        Binding("f1", "help", "help"),
        Binding("f2", "stats", "stats"),
        Binding("ctrl+l", "clear_screen", "clear", show=False),
    ]
    CSS = """
    Screen { layout: vertical; background: $background; }
    #topbar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    #conversation { height: 1fr; scrollbar-size-vertical: 1; }
    #loading { height: 3; display: none; padding: 0 1; }
    #loading.-shown { display: block; }
    #loading LoadingIndicator { width: 6; height: 1; }
    #loading ProgressBar { width: 40; }
    #loading-label { color: $warning; width: auto; margin: 0 1; }
    PromptArea { height: auto; min-height: 3; max-height: 12; border: round $primary; background: $surface; }
    PromptArea:focus { border: round $accent; }
    """

    def __init__(
        self,
        cfg: Config,
        *,
        root: Path,
        engine: Engine | None = None,
        engine_factory: EngineFactory | None = None,
        agent_factory: AgentFactory | None = None,
        resume: str | None = None,
        user_theme_dir: Path | None = None,
        history_path: Path | None = None,
        log_path: Path | None = None,
        persist: bool = True,
        stream_fps: int = STREAM_FPS,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        self.root = root
        self.engine: Engine | None = engine
        self.engine_factory = engine_factory or default_engine_factory(cfg)
        self.agent_factory: AgentFactory = agent_factory or default_agent_factory
        self.resume = resume
        self.history_path = history_path if history_path is not None else state_dir() / "tui_history"
        self.log_path = log_path if log_path is not None else state_dir() / "tui.log"
        self.persist = persist
        self.stream_fps = stream_fps
        self.agent: AgentLike | None = None
        self.session_stats = SessionStats()
        self.generating = False
        self.cancel_token: CancelToken | None = None
        self.pending: list[str] = []
        self._armed_quit = False
        self._current: AssistantView | None = None
        self._cards: dict[str, ToolCard] = {}
        self._log_ready = False
        self.last_final: Final | None = None
        themes, self.theme_errors = textual_themes(user_theme_dir)
        self.theme_names = [t.name for t in themes]
        for t in themes:
            self.register_theme(t)
        self.theme = cfg.theme if cfg.theme in self.theme_names else DEFAULT_THEME

    # ---- layout ------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(self._topbar_text(), id="topbar", markup=False)
        with VerticalScroll(id="conversation"):
            yield Conversation(id="messages")
        with Horizontal(id="loading"):
            yield LoadingIndicator()
            yield Label("loading model…", id="loading-label")
            yield ProgressBar(total=None, show_eta=False, id="loading-progress")
        yield Suggestions(id="suggestions")
        yield PromptArea(history=self._load_history(), id="prompt")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#conversation", VerticalScroll).anchor()
        self.query_one(PromptArea).focus()
        self.status.set_live(mode=self.cfg.mode)
        for err in self.theme_errors:
            self.add_notice(err, "warning")
        self.set_interval(1 / max(1, self.stream_fps), self._flush_stream)
        self._start_engine()

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def messages_box(self) -> Conversation:
        return self.query_one("#messages", Conversation)

    def _topbar_text(self) -> Text:
        t = Text()
        t.append("τ tau", style="bold")
        t.append("  ")
        t.append(self.root.name or str(self.root))
        return t

    # ---- engine loading --------------------------------------------------------------
    def _start_engine(self) -> None:
        self.query_one("#loading").add_class("-shown")
        self.status.set_live(state="loading")
        self._load_engine()

    @work(thread=True, exclusive=True, group="engine")
    def _load_engine(self) -> None:
        def notify(*args: Any, **kw: Any) -> None:
            text = " ".join(str(a) for a in args if not isinstance(a, (int, float)))
            frac: float | None = kw.get("fraction", kw.get("progress"))
            for a in args:
                if isinstance(a, float) and 0.0 <= a <= 1.0:
                    frac = a
            if text or frac is not None:
                self.post_message(LoadProgress(text or "", frac))

        try:
            engine = self.engine if self.engine is not None else self.engine_factory(notify)
            agent = self.agent_factory(engine, self.root, self.cfg, self.approve, self.post_agent_event, self.resume)
        except Exception as e:  # shown on screen, traceback in the log
            self.post_message(EngineFailed(self.log_exception("could not start the model", e)))
            return
        self.post_message(EngineReady(engine, agent))

    def on_load_progress(self, msg: LoadProgress) -> None:
        if msg.text:
            self.query_one("#loading-label", Label).update(msg.text)
        if msg.fraction is not None:
            self.query_one("#loading-progress", ProgressBar).update(total=1.0, progress=msg.fraction)

    def on_engine_ready(self, msg: EngineReady) -> None:
        self.engine = msg.engine
        self.agent = msg.agent
        self.query_one("#loading").remove_class("-shown")
        info = msg.engine.info
        mode = getattr(msg.agent, "mode", self.cfg.mode)
        self.status.set_live(
            state="idle",
            model=info.name,
            draft_model=info.draft_name,
            mode=mode,
            context_tokens=getattr(msg.agent, "context_tokens", 0),
            context_limit=getattr(msg.agent, "context_limit", 0) or info.n_ctx,
        )
        if self.resume:
            self._show_history(getattr(msg.agent, "messages", []))
        if self.pending:
            text = self.pending.pop(0)
            self.pending.clear()
            self._start_turn(text, echo=False)

    def on_engine_failed(self, msg: EngineFailed) -> None:
        self.query_one("#loading").remove_class("-shown")
        self.status.set_live(state="error", message="model not loaded")
        self.add_notice(msg.message, "error")

    def _show_history(self, messages: list[dict]) -> None:
        for m in messages:
            role = m.get("role")
            content = str(m.get("content") or "")
            if role == "user" and content.strip():
                self.messages_box.mount(UserMessage(content))
            elif role == "assistant":
                text = visible_assistant_text(content)
                if text:
                    view = AssistantView()
                    view.append_raw(text)
                    self.messages_box.mount(view)
        self.add_notice(f"resumed session {getattr(self.agent, 'session_id', '')}")

    # ---- errors ------------------------------------------------------------------------
    def log_exception(self, what: str, exc: BaseException) -> str:
        """Log the traceback to the state dir's log file; return the readable one-line message."""
        self._write_log(f"{what}: {exc!r}\n" + "".join(traceback.format_exception(exc)))
        return f"{what}: {exc}  (traceback in {self.log_path})"

    def _write_log(self, text: str) -> None:
        try:
            if not self._log_ready:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                handler = logging.FileHandler(self.log_path, encoding="utf-8")
                handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
                log.addHandler(handler)
                log.setLevel(logging.INFO)
                self._log_ready = True
            log.error(text)
        except OSError:
            pass

    # ---- conversation widgets ----------------------------------------------------------
    def add_notice(self, text: str, kind: str = "") -> NoticeLine:
        line = NoticeLine(Text(text), kind)
        self.messages_box.mount(line)
        return line

    def _mount(self, widget: Widget) -> None:
        self.messages_box.mount(widget)

    async def _flush_stream(self) -> None:
        view = self._current
        if view is not None and view.dirty:
            await view.flush()

    async def flush_now(self) -> None:
        """Render all pending streamed text (tests use it to take deterministic snapshots)."""
        for view in self.query(AssistantView):
            if view.dirty:
                await view.flush()

    # ---- agent events (called on the agent's thread) -----------------------------------
    def post_agent_event(self, event: AgentEvent) -> None:
        self.post_message(AgentEventMessage(event))

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        """The Approver: runs on the agent's thread, blocks until the user answers."""
        fut: Future[ApprovalDecision] = Future()

        def show() -> None:
            def done(decision: ApprovalDecision | None) -> None:
                if not fut.done():
                    fut.set_result(decision or ApprovalDecision(False, note="dialog closed"))

            self.push_screen(ApprovalScreen(request), callback=done)

        try:
            self.call_from_thread(show)
        except Exception as e:
            return ApprovalDecision(False, note=f"approval dialog failed: {e}")
        while True:
            try:
                return fut.result(timeout=0.1)
            except FutureTimeout:
                if not self.is_running:
                    return ApprovalDecision(False, note="tau is closing")

    def on_agent_event_message(self, msg: AgentEventMessage) -> None:
        ev = msg.event
        if isinstance(ev, AssistantDelta):
            if self._current is None or self._current.final:
                self._current = AssistantView()
                self._mount(self._current)
            self._current.append_raw(ev.text)
        elif isinstance(ev, AssistantMessage):
            view = self._current
            if view is None:
                if ev.content.strip():
                    view = AssistantView()
                    self._mount(view)
            if view is not None:
                view.raw = ev.content
                view.final = True
                if not visible_assistant_text(ev.content):
                    view.remove()
                else:
                    self.call_next(view.flush)
            self._current = None
        elif isinstance(ev, ToolCallEvent):
            self._close_stream()
            card = ToolCard(ev.call_id, ev.name, dict(ev.arguments))
            self._cards[ev.call_id] = card
            self._mount(card)
        elif isinstance(ev, ToolResultEvent):
            found = self._cards.get(ev.call_id)
            if found is None:
                found = ToolCard(ev.call_id, ev.name, {})
                self._cards[ev.call_id] = found
                self._mount(found)
            found.set_result(ev.ok, ev.output, ev.diff, ev.exit_code, ev.command)
        elif isinstance(ev, EngineStatsEvent):
            changes: dict[str, Any] = {"stats": ev.stats}
            if ev.context_limit:
                changes["context_tokens"] = ev.context_tokens
                changes["context_limit"] = ev.context_limit
            self.status.set_live(**changes)
            if ev.final:
                self.session_stats.add(ev.stats)
        elif isinstance(ev, ErrorEvent):
            text = ev.message
            if ev.details:
                self._write_log(f"agent error: {ev.message}\n{ev.details}")
                text += f"  (details in {self.log_path})"
            self.add_notice("error: " + text, "error")
        elif isinstance(ev, Notice):
            self.add_notice(ev.message)
        elif isinstance(ev, SessionStarted):
            self.status.set_live(mode=ev.mode)
        elif isinstance(ev, Final):
            pass  # the turn's worker reports the returned Final (TurnDone)

    def _close_stream(self) -> None:
        if self._current is not None:
            view = self._current
            view.final = True
            if not visible_assistant_text(view.raw):
                view.remove()
            else:
                self.call_next(view.flush)
            self._current = None

    # ---- turns ---------------------------------------------------------------------------
    @on(PromptArea.Submitted)
    def _submitted(self, msg: PromptArea.Submitted) -> None:
        self.query_one(Suggestions).show_for("")
        self._save_history(msg.area.input_history)
        self.submit(msg.text)

    def submit(self, text: str) -> None:
        parsed = commands.parse(text)
        if parsed is not None:
            self.run_command(*parsed)
            return
        if self.generating:
            self.add_notice("still generating: wait, or press ctrl+c to cancel", "warning")
            return
        if self.agent is None:
            self.messages_box.mount(UserMessage(text))
            if self.status.live.state == "error":
                self.add_notice("the model is not loaded; see the error above", "error")
            else:
                self.pending.append(text)
                self.add_notice("waiting for the model to load…")
            return
        self._start_turn(text)

    def _start_turn(self, text: str, echo: bool = True) -> None:
        if echo:
            self.messages_box.mount(UserMessage(text))
        self.generating = True
        self.cancel_token = CancelToken()
        self.session_stats.start_turn(text)
        self.status.set_live(state="generating", message="")
        self._run_turn(text, self.cancel_token)

    @work(thread=True, group="turn")
    def _run_turn(self, text: str, cancel: CancelToken) -> None:
        agent = self.agent
        assert agent is not None
        try:
            final = agent.run_turn(text, cancel)
        except Exception as e:
            msg = self.log_exception("the turn failed", e)
            self.post_message(TurnDone(Final("failed", str(e)), error=msg))
            return
        self.post_message(TurnDone(final))

    def on_turn_done(self, msg: TurnDone) -> None:
        self._close_stream()
        self.generating = False
        self._armed_quit = False  # a ctrl+c that cancelled this turn does not count towards quitting
        self.last_final = msg.final
        agent = self.agent
        if agent is not None:
            limit = getattr(agent, "context_limit", 0)
            if limit:
                self.status.set_live(context_tokens=getattr(agent, "context_tokens", 0), context_limit=limit)
        status = msg.final.status
        if msg.error:
            self.add_notice("error: " + msg.error, "error")
        elif status == "cancelled":
            self.add_notice("cancelled", "warning")
        elif status in ("failed", "limit"):
            self.add_notice(f"{status}: {msg.final.message}".rstrip(": "), "error")
        self.status.set_live(state="idle", message="" if status == "done" else status)
        self.cancel_token = None

    # ---- keys ------------------------------------------------------------------------------
    def action_interrupt(self) -> None:
        screen = self.screen
        if isinstance(screen, ApprovalScreen):
            if self.cancel_token is not None:
                self.cancel_token.cancel()
                self.status.set_live(state="cancelling")
            screen.dismiss(ApprovalDecision(False, note="cancelled by the user"))
            return
        if self.generating and self.cancel_token is not None and not self.cancel_token.cancelled:
            self.cancel_token.cancel()
            self.status.set_live(state="cancelling")
            self._arm_quit()
            return
        prompt = self.query_one(PromptArea)
        if prompt.text and not self._armed_quit:
            prompt.clear()
            return
        if self._armed_quit:
            self.action_quit_app()
            return
        self._arm_quit()
        self.notify("press ctrl+c again to quit", timeout=3)

    def _arm_quit(self) -> None:
        self._armed_quit = True
        self.set_timer(3.0, self._disarm_quit)

    def _disarm_quit(self) -> None:
        self._armed_quit = False

    def action_quit_app(self) -> None:
        if self.cancel_token is not None:
            self.cancel_token.cancel()
        self.exit(0)

    def action_help(self) -> None:
        self.push_screen(TextScreen("tau: keys and commands", Text(HELP_KEYS + "\n\n" + commands.help_text())))

    def action_stats(self) -> None:
        self.push_screen(StatsScreen(self.session_stats, self.status.fields()))

    def action_clear_screen(self) -> None:
        self.messages_box.remove_children()

    @on(PromptArea.Changed)
    def _prompt_changed(self, event: PromptArea.Changed) -> None:
        self.query_one(Suggestions).show_for(event.text_area.text)

    # ---- slash commands ----------------------------------------------------------------
    def run_command(self, name: str, arg: str) -> None:
        full = commands.resolve(name)
        if full is None:
            self.add_notice(f"unknown command /{name}; /help lists them", "warning")
            return
        busy = full in ("undo", "clear", "compact", "diff") and self.generating
        if busy:
            self.add_notice(f"/{full}: still generating (ctrl+c cancels)", "warning")
            return
        needs_agent = full in ("undo", "clear", "compact", "diff")
        if needs_agent and self.agent is None:
            self.add_notice(f"/{full}: the model is not loaded yet", "warning")
            return
        getattr(self, f"cmd_{full}")(arg)

    def cmd_help(self, arg: str) -> None:
        self.action_help()

    def cmd_quit(self, arg: str) -> None:
        self.action_quit_app()

    def cmd_stats(self, arg: str) -> None:
        self.action_stats()

    def cmd_model(self, arg: str) -> None:
        if self.engine is None:
            self.add_notice("the model is still loading", "warning")
            return
        info = self.engine.info
        lines = [
            f"model   {info.name}",
            f"path    {info.path}",
            f"arch    {info.arch}  quant {info.quant}  context {info.n_ctx}",
            f"draft   {info.draft_name or 'none'}",
            f"backend {info.backend}   speculation {self.cfg.spec}",
        ]
        self.add_notice("\n".join(lines), "block")

    def cmd_mode(self, arg: str) -> None:
        cur = getattr(self.agent, "mode", None) or self.status.live.mode
        if not arg:
            new = commands.MODES[(commands.MODES.index(cur) + 1) % len(commands.MODES)] if cur in commands.MODES else "ask"
        elif arg in commands.MODES:
            new = arg
        else:
            self.add_notice(f"/mode: choose one of {', '.join(commands.MODES)}", "warning")
            return
        if self.agent is not None:
            self.agent.mode = new
        self.status.set_live(mode=new)
        self.add_notice(f"mode: {new}")

    def cmd_theme(self, arg: str) -> None:
        if not arg:
            names = "  ".join(("*" if n == self.theme else "") + n for n in self.theme_names)
            self.add_notice(f"themes: {names}\n/theme NAME switches; user themes: <config dir>/themes/*.toml")
            return
        if arg not in self.theme_names:
            self.add_notice(f"/theme: no theme {arg!r}; try: {', '.join(self.theme_names)}", "warning")
            return
        self.theme = arg
        self.status.refresh_bar()
        if self.persist:
            try:
                save_setting("theme", arg)
            except Exception as e:
                self.add_notice(self.log_exception("could not save the theme", e), "error")
        self.add_notice(f"theme: {arg}")

    def cmd_sessions(self, arg: str) -> None:
        self._list_sessions()

    @work(thread=True, group="cmd")
    def _list_sessions(self) -> None:
        try:
            from app.session import list_sessions

            items = list(list_sessions())
        except Exception as e:
            msg = self.log_exception("could not list sessions", e)
            self.call_from_thread(self.add_notice, msg, "error")
            return
        lines = [describe_session(s) for s in items[:30]] or ["no saved sessions"]
        lines.append("")
        lines.append("resume one with: tau --resume ID")
        self.call_from_thread(self.push_screen, TextScreen("Sessions", Text("\n".join(lines))))

    def cmd_undo(self, arg: str) -> None:
        self._agent_call("undo", lambda a: a.undo(), self._undo_done)

    def _undo_done(self, restored: Any) -> None:
        files = list(restored or [])
        self.add_notice("undo: restored " + ", ".join(files) if files else "undo: nothing to undo")

    def cmd_diff(self, arg: str) -> None:
        self._agent_call("diff", lambda a: a.diff(), lambda d: self._mount(DiffCard("session diff", str(d or ""))))

    def cmd_clear(self, arg: str) -> None:
        def done(_: Any) -> None:
            self.messages_box.remove_children()
            self._cards.clear()
            self.add_notice("conversation cleared")

        self._agent_call("clear", lambda a: a.clear(), done)

    def cmd_compact(self, arg: str) -> None:
        self.status.set_live(state="generating", message="compacting")
        self.generating = True

        def done(_: Any) -> None:
            self.generating = False
            self.status.set_live(state="idle", message="")
            agent = self.agent
            if agent is not None and agent.context_limit:
                self.status.set_live(context_tokens=agent.context_tokens, context_limit=agent.context_limit)
            self.add_notice("conversation compacted")

        self._agent_call("compact", lambda a: a.compact(), done, on_error=lambda: self._compact_failed())

    def _compact_failed(self) -> None:
        self.generating = False
        self.status.set_live(state="idle", message="")

    def _agent_call(
        self,
        what: str,
        fn: Callable[[AgentLike], Any],
        done: Callable[[Any], None],
        on_error: Callable[[], None] | None = None,
    ) -> None:
        self._agent_worker(what, fn, done, on_error)

    @work(thread=True, group="cmd")
    def _agent_worker(
        self,
        what: str,
        fn: Callable[[AgentLike], Any],
        done: Callable[[Any], None],
        on_error: Callable[[], None] | None,
    ) -> None:
        agent = self.agent
        assert agent is not None
        try:
            result = fn(agent)
        except Exception as e:
            msg = self.log_exception(f"/{what} failed", e)
            self.call_from_thread(self.add_notice, msg, "error")
            if on_error is not None:
                self.call_from_thread(on_error)
            return
        self.call_from_thread(done, result)

    # ---- history -----------------------------------------------------------------------------
    def _load_history(self) -> list[str]:
        try:
            raw = self.history_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return []
        return [e.replace("\\n", "\n") for e in raw.splitlines() if e][-HISTORY_MAX:]

    def _save_history(self, history: list[str]) -> None:
        if not self.persist:
            return
        try:
            self.history_path.parent.mkdir(parents=True, exist_ok=True)
            lines = [h.replace("\n", "\\n") for h in history[-HISTORY_MAX:]]
            self.history_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        except OSError:
            pass

    def on_unmount(self) -> None:
        if self.cancel_token is not None:
            self.cancel_token.cancel()


HELP_KEYS = """enter        send
ctrl+j       newline (shift+enter where the terminal reports it)
up / down    input history (on the first / last line)
tab          complete a /command
ctrl+c       cancel generation; press twice to quit
esc          close a dialog (rejects an approval)
f1           this help
f2           session statistics
approval     y approve · a always (this session) · n reject (with the note typed)"""


def describe_session(s: Any) -> str:
    if isinstance(s, dict):
        get = s.get
    else:

        def get(k: str, default: Any = None) -> Any:
            return getattr(s, k, default)

    sid = get("id") or get("session_id") or ""
    if not sid:
        return str(s)
    parts = [str(sid)]
    for key in ("updated", "created", "workspace", "title", "summary"):
        v = get(key)
        if v:
            parts.append(str(v))
    return "  ".join(parts)


def create_app(
    cfg: Config | None = None,
    *,
    root: Path | None = None,
    engine: Engine | None = None,
    engine_factory: EngineFactory | None = None,
    agent_factory: AgentFactory | None = None,
    resume: str | None = None,
    user_theme_dir: Path | None = None,
    history_path: Path | None = None,
    log_path: Path | None = None,
    persist: bool = True,
    stream_fps: int = STREAM_FPS,
) -> TauApp:
    """The app factory shared by the CLI (``tau``) and the tests."""
    return TauApp(
        cfg or Config(),
        root=(root or Path.cwd()).resolve(),
        engine=engine,
        engine_factory=engine_factory,
        agent_factory=agent_factory,
        resume=resume,
        user_theme_dir=user_theme_dir,
        history_path=history_path,
        log_path=log_path,
        persist=persist,
        stream_fps=stream_fps,
    )
