"""The owner thread: every llama context is created, used and freed on this one thread."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


class OwnerThread:
    def __init__(self, name: str = "tau-engine") -> None:
        self._q: queue.Queue[tuple[Callable[[], Any], Future] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            fn, fut = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn())
            except BaseException as e:  # delivered to the caller
                fut.set_exception(e)

    def submit(self, fn: Callable[[], T]) -> Future:
        fut: Future = Future()
        if threading.current_thread() is self._thread:
            try:
                fut.set_result(fn())
            except BaseException as e:
                fut.set_exception(e)
            return fut
        self._q.put((fn, fut))
        return fut

    def call(self, fn: Callable[[], T]) -> T:
        return self.submit(fn).result()

    @property
    def pending(self) -> int:
        return self._q.qsize()

    def stop(self) -> None:
        self._q.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=30)
