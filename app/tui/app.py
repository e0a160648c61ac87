"""The Textual app and its factory (shared by ``tau`` and the tests).

The app renders a ModelSession (app.controller) and forwards what the user types to it.
Threads: the session opens the engine in a ``@work(thread=True)`` worker and runs each
turn in a thread of its own; agent events come back with ``post_message``; the approver
(called on the agent's thread) shows the approval dialog with ``call_from_thread`` and
waits on a Future. Widgets are only touched on the app's thread.
"""

from __future__ import annotations

from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, Label, LoadingIndicator, ProgressBar, Static

from app import events
from app.config import Config, state_dir
from app.controller import commands, slash
from app.controller.agent import AgentFactory, AgentLike
from app.controller.model_session import LoadProgress, ModelSession, SessionSetup
from app.controller.results import CommandResult
from app.tui import show
from app.tui.messages import AgentEventMessage, EngineFailed, EngineReady, LoadProgressMessage, TurnDone
from app.tui.prompt import PromptArea, Suggestions, load_history, save_history
from app.tui.screens import ApprovalScreen, StatsScreen
from app.tui.statusbar import StatusBar
from app.tui.theme import textual_themes
from app.tui.transcript import Transcript
from app.tui.widgets import AssistantView, Conversation
from engine.types import Engine
from tools.permissions_types import ApprovalDecision, ApprovalRequest

STREAM_FPS = 12  # markdown refreshes per second while streaming


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
        setup: SessionSetup,
        history_path: Path | None = None,
        log_path: Path | None = None,
        stream_fps: int = STREAM_FPS,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        self.root = root
        log = log_path if log_path is not None else state_dir() / "tui.log"
        self.session = ModelSession(cfg, root, setup, on_event=self.post_agent_event, approver=self.approve, log_path=log)
        self.history_path = history_path if history_path is not None else state_dir() / "tui_history"
        self.persist = setup.persist
        self.stream_fps = stream_fps
        self.generating = False  # a turn or /compact runs: set here, cleared when its result is shown
        self.pending: list[str] = []
        self._armed_quit = False
        self.last_final: events.Final | None = None
        self.theme_names = list(self.session.themes)
        for t in textual_themes(self.session.themes.values()):
            self.register_theme(t)
        self.theme = self.session.theme

    @property
    def agent(self) -> AgentLike | None:
        return self.session.agent

    @property
    def engine(self) -> Engine | None:
        return self.session.engine

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
        yield PromptArea(history=load_history(self.history_path), id="prompt")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.transcript = Transcript(self.query_one("#messages", Conversation))
        self.query_one("#conversation", VerticalScroll).anchor()
        self.query_one(PromptArea).focus()
        self.status.set_live(mode=self.session.mode)
        for err in self.session.theme_errors:
            self.add_notice(err, "warning")
        self.set_interval(1 / max(1, self.stream_fps), self.transcript.flush_current)
        self.query_one("#loading").add_class("-shown")
        self.status.set_live(state="loading")
        self._load_engine()

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    def _topbar_text(self) -> Text:
        t = Text()
        t.append("τ tau", style="bold")
        t.append("  ")
        t.append(self.root.name or str(self.root))
        return t

    def add_notice(self, text: str, kind: str = "") -> None:
        self.transcript.notice(text, kind)

    async def flush_now(self) -> None:
        """Render all pending streamed text (tests use it to take deterministic snapshots)."""
        for view in self.query(AssistantView):
            if view.dirty:
                await view.flush()

    # ---- engine loading --------------------------------------------------------------
    @work(thread=True, exclusive=True, group="engine")
    def _load_engine(self) -> None:
        problem = self.session.open(lambda p: self.post_message(LoadProgressMessage(p)))
        self.post_message(EngineFailed(problem.message) if problem is not None else EngineReady())

    def on_load_progress_message(self, msg: LoadProgressMessage) -> None:
        p: LoadProgress = msg.progress
        if p.text:
            self.query_one("#loading-label", Label).update(p.text)
        if p.fraction is not None:
            self.query_one("#loading-progress", ProgressBar).update(total=1.0, progress=p.fraction)

    def on_engine_ready(self, msg: EngineReady) -> None:
        engine, agent = self.session.engine, self.session.agent
        assert engine is not None and agent is not None
        self.query_one("#loading").remove_class("-shown")
        info = engine.info
        tokens, limit = self.session.context
        self.status.set_live(state="idle", model=info.name, draft_model=info.draft_name, mode=self.session.mode,
                             context_tokens=tokens, context_limit=limit or info.n_ctx)
        if self.session.resume:
            self.transcript.history(agent.messages)
            self.add_notice(f"resumed session {agent.session_id}")
        if self.pending:
            text = self.pending.pop(0)
            self.pending.clear()
            self._start_turn(text, echo=False)

    def on_engine_failed(self, msg: EngineFailed) -> None:
        self.query_one("#loading").remove_class("-shown")
        self.status.set_live(state="error", message="model not loaded")
        self.add_notice(msg.message, "error")

    # ---- agent events (called on the agent's thread) -----------------------------------
    def post_agent_event(self, event: events.AgentEvent) -> None:
        self.post_message(AgentEventMessage(event))

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        """The Approver: runs on the agent's thread, blocks until the user answers."""
        fut: Future[ApprovalDecision] = Future()

        def ask() -> None:
            def done(decision: ApprovalDecision | None) -> None:
                if not fut.done():
                    fut.set_result(decision or ApprovalDecision(False, note="dialog closed"))

            self.push_screen(ApprovalScreen(request), callback=done)

        try:
            self.call_from_thread(ask)
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
        if isinstance(ev, events.AssistantDelta):
            self.transcript.delta(ev.text)
        elif isinstance(ev, events.AssistantMessage):
            self.transcript.message(ev.content)
        elif isinstance(ev, events.ToolCallEvent):
            self.transcript.tool_call(ev)
        elif isinstance(ev, events.ToolResultEvent):
            self.transcript.tool_result(ev)
        elif isinstance(ev, events.EngineStatsEvent):
            if ev.context_limit:
                self.status.set_live(stats=ev.stats, context_tokens=ev.context_tokens, context_limit=ev.context_limit)
            else:
                self.status.set_live(stats=ev.stats)
        elif isinstance(ev, events.ErrorEvent):
            self.add_notice("error: " + ev.message, "error")
        elif isinstance(ev, events.Notice):
            self.add_notice(ev.message)
        elif isinstance(ev, events.SessionStarted):
            self.status.set_live(mode=ev.mode)
        # Final: the turn's thread reports the returned Final (TurnDone)

    # ---- turns ---------------------------------------------------------------------------
    @on(PromptArea.Submitted)
    def _submitted(self, msg: PromptArea.Submitted) -> None:
        self.query_one(Suggestions).show_for("")
        if self.persist:
            save_history(self.history_path, msg.area.input_history)
        self.submit(msg.text)

    def submit(self, text: str) -> None:
        parsed = commands.parse(text)
        if parsed is not None:
            self.run_command(*parsed)
            return
        if self.generating or self.session.busy:
            self.add_notice("still generating: wait, or press ctrl+c to cancel", "warning")
            return
        if self.session.agent is None:
            self.transcript.user(text)
            if self.status.live.state == "error":
                self.add_notice("the model is not loaded; see the error above", "error")
            else:
                self.pending.append(text)
                self.add_notice("waiting for the model to load…")
            return
        self._start_turn(text)

    def _start_turn(self, text: str, echo: bool = True) -> None:
        if echo:
            self.transcript.user(text)
        self.generating = True
        self.status.set_live(state="generating", message="")
        self.session.start_turn(text, on_done=lambda outcome: self.post_message(TurnDone(outcome)))

    def on_turn_done(self, msg: TurnDone) -> None:
        self.transcript.close_stream()
        self.generating = False
        self._armed_quit = False  # a ctrl+c that cancelled this turn does not count towards quitting
        final = msg.outcome.final
        self.last_final = final
        tokens, limit = self.session.context
        if limit:
            self.status.set_live(context_tokens=tokens, context_limit=limit)
        if msg.outcome.error:
            self.add_notice("error: " + msg.outcome.error, "error")
        elif final.status == "cancelled":
            self.add_notice("cancelled", "warning")
        elif final.status in ("failed", "limit"):
            self.add_notice(f"{final.status}: {final.message}".rstrip(": "), "error")
        self.status.set_live(state="idle", message="" if final.status == "done" else final.status)

    # ---- keys ------------------------------------------------------------------------------
    def action_interrupt(self) -> None:
        screen = self.screen
        if isinstance(screen, ApprovalScreen):
            if self.session.cancel():
                self.status.set_live(state="cancelling")
            screen.dismiss(ApprovalDecision(False, note="cancelled by the user"))
            return
        if self.generating and self.session.cancel():
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
        self.session.cancel()
        self.exit(0)

    def action_help(self) -> None:
        show.render(self, self.session.command("help"))

    def action_stats(self) -> None:
        self.push_screen(StatsScreen(self.session.stats, self.status.fields()))

    def action_clear_screen(self) -> None:
        self.transcript.clear()

    @on(PromptArea.Changed)
    def _prompt_changed(self, event: PromptArea.Changed) -> None:
        self.query_one(Suggestions).show_for(event.text_area.text)
        self.session.typing(event.text_area.text)  # a pause computes the message's prompt ahead

    # ---- slash commands ----------------------------------------------------------------
    def run_command(self, name: str, arg: str) -> None:
        """Slow commands run in a worker; the result is shown on the app's thread either way."""
        full = slash.resolve(name)
        if full not in slash.SLOW:
            self.show_result(self.session.command(name, arg))
            return
        compacting = full == "compact" and not self.generating and self.session.agent is not None
        if compacting:
            self.generating = True
            self.status.set_live(state="generating", message="compacting")
        self._slow_command(name, arg, compacting)

    @work(thread=True, group="cmd")
    def _slow_command(self, name: str, arg: str, compacting: bool) -> None:
        result = self.session.command(name, arg)
        self.call_from_thread(self.show_result, result, compacting)

    def show_result(self, result: CommandResult, compacting: bool = False) -> None:
        if compacting:
            self.generating = False
            self.status.set_live(state="idle", message="")
        show.render(self, result)

    def on_unmount(self) -> None:
        self.session.cancel()


def create_app(
    cfg: Config | None = None,
    *,
    root: Path | None = None,
    engine: Engine | None = None,
    agent_factory: AgentFactory | None = None,
    resume: str | None = None,
    user_theme_dir: Path | None = None,
    history_path: Path | None = None,
    log_path: Path | None = None,
    persist: bool = True,
    stream_fps: int = STREAM_FPS,
) -> TauApp:
    """The app factory shared by the CLI (``tau``) and the tests."""
    setup = SessionSetup(engine, agent_factory, resume, user_theme_dir, persist)
    root = (root or Path.cwd()).resolve()
    return TauApp(cfg or Config(), root=root, setup=setup, history_path=history_path, log_path=log_path,
                  stream_fps=stream_fps)
