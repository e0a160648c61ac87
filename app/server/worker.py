"""The single engine stream, shared by all requests through a FIFO queue.

One worker thread takes jobs in submission order and runs ``engine.stream`` for each; events
go back to the request's asyncio loop. A job cancelled while waiting is dropped without
touching the engine; a job cancelled while running stops at the engine's next check.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import replace

from app.loopwatch import LoopWatch
from engine.types import CancelToken, DoneEvent, Engine, EngineEvent, GenerateRequest, GenStats, TokenEvent

log = logging.getLogger("tau.server")


class Job:
    def __init__(self, seq: int, request: GenerateRequest, loop: asyncio.AbstractEventLoop,
                 n_prompt: int | None = None) -> None:
        self.seq = seq
        self.request = request
        self.n_prompt = n_prompt  # the prompt's tokens where the caller counted them
        self.cancel = CancelToken()
        self.loop = loop
        self.events: asyncio.Queue[EngineEvent] = asyncio.Queue()
        self.enqueued_at = time.monotonic()
        self.started_at: float | None = None
        self.finished = threading.Event()

    def push(self, ev: EngineEvent) -> None:
        try:
            self.loop.call_soon_threadsafe(self.events.put_nowait, ev)
        except RuntimeError:  # the loop is gone (server shutting down)
            self.cancel.cancel()


class EngineWorker:
    """FIFO queue in front of one engine. ``on_start(job)`` and ``on_done(job, done)`` are called in the
    worker thread, as the engine takes the job and when it ends (``on_done`` also for a dropped job)."""

    def __init__(self, engine: Engine, on_done: Callable[[Job, DoneEvent], None] | None = None,
                 on_start: Callable[[Job], None] | None = None, loop_stop: bool = False) -> None:
        self.engine = engine
        self.loop_stop = loop_stop  # stop a reply caught in a loop (app.loopwatch): finish "loop"
        self.on_done = on_done
        self.on_start = on_start
        self._q: queue.Queue[Job | None] = queue.Queue()
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self.waiting = 0
        self.submitted = 0  # seq of the last job submitted
        self.running: Job | None = None
        self.served: list[int] = []  # seq numbers in the order the engine started them (bounded)
        self._thread = threading.Thread(target=self._run, name="tau-engine-worker", daemon=True)
        self._thread.start()

    @property
    def queue_length(self) -> int:
        """Jobs waiting plus the one running."""
        return self.waiting + (1 if self.running is not None else 0)

    def submit(self, request: GenerateRequest, loop: asyncio.AbstractEventLoop | None = None,
               n_prompt: int | None = None) -> Job:
        job = Job(0, request, loop or asyncio.get_running_loop(), n_prompt)
        with self._lock:
            job.seq = next(self._seq)
            self.submitted = job.seq
            self.waiting += 1
            self._q.put(job)
        return job

    def close(self, timeout: float = 5.0) -> None:
        if self.running is not None:
            self.running.cancel.cancel()
        self._q.put(None)
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            job = self._q.get()
            if job is None:
                return
            done: DoneEvent | None
            with self._lock:
                self.waiting -= 1
            if job.cancel.cancelled:
                done = DoneEvent("", (), "cancelled", GenStats())
                job.push(done)
                self._finish(job, done)
                continue
            self.running = job
            job.started_at = time.monotonic()
            self.served.append(job.seq)
            del self.served[:-1000]
            self._call(self.on_start, job)
            done = None
            prompt = job.request.prompt
            watch = LoopWatch(allow=prompt if isinstance(prompt, str) else "") if self.loop_stop else None
            counts: list[int] = []  # each piece fed to the watch: its token count, for the cut
            try:
                for ev in self.engine.stream(job.request, job.cancel):
                    if isinstance(ev, DoneEvent):
                        done = ev if watch is None or not watch.period else _cut(ev, watch, counts)
                        ev = done
                    elif isinstance(ev, TokenEvent) and watch is not None and isinstance(ev.text, str):
                        if watch.period:
                            continue  # what the engine wrote after the loop was seen goes nowhere
                        counts.append(len(ev.token_ids))
                        if watch.feed(ev.text):
                            job.cancel.cancel()
                    job.push(ev)
                    if done is not None:
                        break
            except Exception as e:  # an engine bug must not kill the server
                log.exception("engine stream failed")
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                done = DoneEvent("", (), "error", GenStats(), error=f"engine error: {first}")
                job.push(done)
            if done is None:
                done = DoneEvent("", (), "error", GenStats(), error="engine stream ended without a result")
                job.push(done)
            self.running = None
            self._finish(job, done)

    def _finish(self, job: Job, done: DoneEvent) -> None:
        job.finished.set()
        self._call(self.on_done, job, done)

    @staticmethod
    def _call(hook: Callable[..., None] | None, *args: object) -> None:
        if hook is not None:
            try:
                hook(*args)
            except Exception:  # pragma: no cover - metrics and logs must never break serving
                log.exception("worker hook failed")


def _cut(done: DoneEvent, watch: LoopWatch, counts: list[int]) -> DoneEvent:
    """The reply up to the end of the loop's first copy (finish "loop"); its ids to the last whole piece."""
    n_ids = sum(counts[: watch.kept_pieces()])
    return replace(done, text=watch.kept(watch.text), token_ids=done.token_ids[:n_ids], finish_reason="loop")
