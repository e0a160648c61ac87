"""A session with a model, without a screen: the contract every interactive front end uses.

The front end supplies two callbacks, both called on the agent's thread: ``on_event`` gets
every agent event (after the session has counted its stats), ``approver`` answers approval
requests (it may block until the user decides). The session opens the engine
(:meth:`open`, blocking: a UI calls it from a worker thread), builds the agent, runs each
turn in a thread of its own (:meth:`start_turn`, :meth:`cancel`), runs slash commands
(:meth:`command`, a typed result from app.controller.results) and logs errors with their
tracebacks (:attr:`errors`), so that a front end only renders and forwards.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.config import Config, config_dir
from app.controller import opening, slash
from app.controller.agent import AgentFactory, AgentLike, default_agent_factory
from app.controller.errorlog import ErrorLog
from app.controller.results import CommandResult, Problem
from app.controller.statsfmt import SessionStats
from app.events import AgentEvent, EngineStatsEvent, ErrorEvent, Final
from engine.types import CancelToken, Engine, GenStats, LinkedCancel, prime
from themes import DEFAULT_THEME, ThemeSpec, load_themes
from tools.permissions_types import ApprovalDecision, ApprovalRequest, Approver

REPRIME = frozenset({"clear", "compact"})  # commands that replace the conversation's prompt
TYPING_PAUSE_S = 0.8  # a pause this long while typing computes the message's prompt ahead


@dataclass(frozen=True)
class LoadProgress:
    """A step of opening the engine; ``fraction`` is set while a file is read or assembled."""

    text: str
    fraction: float | None = None


@dataclass(frozen=True)
class SessionSetup:
    """How a front end wants its session: the parts tests and the CLI choose."""

    engine: Engine | None = None  # an engine already open (else open_engine opens cfg's)
    agent_factory: AgentFactory | None = None
    resume: str | None = None  # a session id, or "latest"
    theme_dir: Path | None = None  # user themes (default <config dir>/themes)
    persist: bool = True  # remember settings such as /theme


@dataclass(frozen=True)
class TurnOutcome:
    final: Final
    error: str = ""  # the one-line message (traceback logged) when the turn itself raised


class Turn:
    """One running turn: its cancel token and, once ``done`` is set, its outcome."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cancel = CancelToken()
        self.done = threading.Event()
        self.outcome: TurnOutcome | None = None

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)


class ModelSession:
    def __init__(
        self,
        cfg: Config,
        root: Path,
        setup: SessionSetup,
        *,
        on_event: Callable[[AgentEvent], None],
        approver: Approver,
        log_path: Path,
    ) -> None:
        self.cfg = cfg
        self.root = root
        self.engine = setup.engine
        self.agent: AgentLike | None = None
        self.resume = setup.resume
        self.persist = setup.persist
        self.errors = ErrorLog(log_path)
        self.stats = SessionStats()
        self.last_stats: GenStats | None = None
        self.context = (0, 0)  # tokens of the conversation, the model's context length
        self.turn: Turn | None = None
        self.primed: threading.Thread | None = None  # the last prime, while the user types
        self._closing = CancelToken()
        self._prime_cancel: CancelToken | None = None
        self._primed_text: str | None = None  # the typed message the running prime is for (None: none)
        self._typing_timer: threading.Timer | None = None
        self._typed = ""  # the message being typed (one typed during a turn is computed when it ends)
        self._on_event = on_event
        self._approver = approver
        self._agent_factory = setup.agent_factory or default_agent_factory
        self._mode = cfg.mode
        self._commands_running = 0
        self._lock = threading.Lock()  # slow commands may run on several worker threads
        theme_dir = setup.theme_dir if setup.theme_dir is not None else config_dir() / "themes"
        specs, self.theme_errors = load_themes(theme_dir)
        self.themes: dict[str, ThemeSpec] = specs
        self.theme = cfg.theme if cfg.theme in specs else DEFAULT_THEME

    # ---- state ---------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self.agent.mode if self.agent is not None else self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        self._mode = value
        if self.agent is not None:
            self.agent.mode = value

    @property
    def generating(self) -> bool:
        return self.turn is not None and not self.turn.done.is_set()

    @property
    def busy(self) -> bool:
        """A turn or a slow command (compact, undo, ...) is running."""
        return self.generating or self._commands_running > 0

    # ---- opening -------------------------------------------------------------------------
    def open(self, on_progress: Callable[[LoadProgress], object]) -> Problem | None:
        """Open the engine (unless one was given) and build the agent; a Problem if that failed."""
        def notify(text: str) -> None:
            on_progress(LoadProgress(text))

        def progress(text: str, fraction: float) -> None:
            on_progress(LoadProgress(text, float(fraction)))

        try:
            if self.engine is None:
                self.engine = opening.open_engine(self.cfg, notify, progress=progress)
            self.agent = self._agent_factory(
                self.engine, self.root, self.cfg, self._approve, self._event, self.resume
            )
        except Exception as e:  # the user sees one line, the traceback is in the log
            return Problem(self.errors.exception("could not start the model", e), "error")
        self.agent.mode = self._mode
        self._note_context()
        self.prime()
        return None

    def prime(self) -> None:
        """Compute the conversation so far in the background, so that the next turn's first token
        waits only for the user's message (the system prompt and repo map, or a resumed history,
        are computed while the user types). A turn started meanwhile queues behind it on the engine
        and reuses what it computed."""
        agent, engine = self.agent, self.engine
        if agent is not None and engine is not None:
            self._start_prime(lambda: engine.chat_prompt(agent.messages, add_generation_prompt=False), None)

    def typing(self, text: str) -> None:
        """The message as typed so far (a front end calls this on every change). After a pause of
        TYPING_PAUSE_S the prompt a turn would send for it, with the files it names attached, is
        computed ahead; a newer pause supersedes it, and so does a turn started with other text."""
        self._typed = text
        if self._typing_timer is not None:
            self._typing_timer.cancel()
            self._typing_timer = None
        if not self.cfg.prime or not text.strip() or text.lstrip().startswith("/"):
            return
        self._typing_timer = threading.Timer(TYPING_PAUSE_S, self._prime_typed, args=(text,))
        self._typing_timer.daemon = True
        self._typing_timer.start()

    def _prime_typed(self, text: str) -> None:
        agent = self.agent
        if agent is not None and not self.busy and not self._closing.cancelled:
            self._start_prime(lambda: agent.next_prompt(text), text)

    def _start_prime(self, render: Callable[[], str], text: str | None) -> None:
        engine = self.engine
        if engine is None or not self.cfg.prime:
            return
        if self._prime_cancel is not None:
            self._prime_cancel.cancel()  # what it computed stays cached: the newer prompt mostly extends it
        cancel = self._prime_cancel = LinkedCancel(self._closing)  # a newer prime supersedes it; closing stops all
        self._primed_text = text

        def work() -> None:
            try:
                prime(engine, render(), cancel, save=text is None)  # a draft message is not kept on disk
            except Exception as e:  # a failed prime costs only time: the turn computes the prompt itself
                self.errors.exception("computing the prompt ahead failed", e)

        self.primed = threading.Thread(target=work, name="tau-prime", daemon=True)
        self.primed.start()

    def close(self) -> None:
        self._closing.cancel()
        if self._typing_timer is not None:
            self._typing_timer.cancel()
        if self.turn is not None:
            self.turn.cancel.cancel()
        if self.engine is not None:
            try:
                self.engine.close()
            except Exception as e:
                self.errors.exception("closing the engine failed", e)

    # ---- turns ---------------------------------------------------------------------------
    def start_turn(self, text: str, on_done: Callable[[TurnOutcome], object] | None = None) -> Turn:
        """Run one turn of the agent in a thread; ``on_done`` is called there when it ends."""
        agent = self.agent
        if agent is None:
            raise RuntimeError("the model is not loaded")
        if self.busy:
            raise RuntimeError("a turn is running")
        if self._typing_timer is not None:
            self._typing_timer.cancel()
        if self._prime_cancel is not None and self._primed_text not in (None, text):
            self._prime_cancel.cancel()  # it computes a message the user changed before sending
        self._typed = ""
        turn = Turn(text)
        self.turn = turn
        self.stats.start_turn(text)

        def work() -> None:
            try:
                outcome = TurnOutcome(agent.run_turn(text, turn.cancel))
            except Exception as e:
                outcome = TurnOutcome(Final("failed", str(e)), self.errors.exception("the turn failed", e))
            self._note_context()
            turn.outcome = outcome
            turn.done.set()
            if self._typed.strip():
                self.typing(self._typed)
            if on_done is not None:
                on_done(outcome)

        threading.Thread(target=work, name="tau-turn", daemon=True).start()
        return turn

    def cancel(self) -> bool:
        """Cancel the running turn; False if there is none (or it is already cancelled)."""
        turn = self.turn
        if turn is None or turn.done.is_set() or turn.cancel.cancelled:
            return False
        turn.cancel.cancel()
        return True

    # ---- slash commands ------------------------------------------------------------------
    def command(self, name: str, arg: str = "") -> CommandResult:
        """Run ``/name arg``. Slow commands (see slash.SLOW) block: a UI runs them off its thread."""
        full = slash.resolve(name)
        slow = full in slash.SLOW
        if slow:
            with self._lock:
                self._commands_running += 1
        try:
            return slash.run(self, name, arg)
        except Exception as e:
            return Problem(self.errors.exception(f"/{full or name} failed", e), "error")
        finally:
            if slow:
                with self._lock:
                    self._commands_running -= 1
                self._note_context()
            if full in REPRIME:
                self.prime()

    # ---- callbacks on the agent's thread ---------------------------------------------------
    def _event(self, ev: AgentEvent) -> None:
        if isinstance(ev, EngineStatsEvent):
            if ev.context_limit:
                self.context = (ev.context_tokens, ev.context_limit)
            if ev.final:
                self.stats.add(ev.stats)
                self.last_stats = ev.stats
        elif isinstance(ev, ErrorEvent) and ev.details:
            ev = ErrorEvent(self.errors.details(ev.message, ev.details), ev.details)
        self._on_event(ev)

    def _approve(self, request: ApprovalRequest) -> ApprovalDecision:
        turn = self.turn
        if turn is not None and turn.cancel.cancelled:
            return ApprovalDecision(False, note="cancelled by the user")
        return self._approver(request)

    def _note_context(self) -> None:
        agent = self.agent
        if agent is not None and agent.context_limit:
            self.context = (agent.context_tokens, agent.context_limit)
