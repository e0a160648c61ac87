"""A verify pass's per-row host work spread over threads (a GPU host's idle cores).

On a GPU a 64-row verify pass takes about 10 ms on the device, and each row's argmax or
sampling distribution over a 152k vocabulary took another 2-6 ms a pass on one host core
(MEASUREMENTS.md, the per-pass trace). Off unless ``verify_threads`` asks for it: on an H100
host (16 cores) 8 threads made a sampled reply's verification 12-50% slower and a greedy one's no
faster (MEASUREMENTS.md, the thirty-third round), since a block of rows prepared ahead is wasted past
a rejection and the distributions' small numpy steps hold the GIL. Given the draft, the rows are independent (row i's
history is the history plus the draft's first i tokens) and numpy releases the GIL for the
work, so blocks of rows run at once. Nothing here draws a random number: the caller samples
from the prepared distributions in row order, so the verdict is the sequential one exactly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from engine.sampling import Sampler
from engine.types import SamplingParams

MIN_ROWS = 8  # fewer rows than this are not worth a dispatch to the threads (tens of microseconds)
MAX_THREADS = 8


class RowPool:
    def __init__(self, threads: int) -> None:
        if threads < 2:
            raise ValueError(f"a row pool needs at least 2 threads, not {threads}")
        self.threads = threads
        self.block = 2 * threads  # rows prepared per round: a rejection early in a pass wastes little
        self._ex = ThreadPoolExecutor(threads, thread_name_prefix="tau-rows")
        self._local = threading.local()

    def _sampler(self, params: SamplingParams) -> Sampler:
        """This thread's sampler (its weights buffer is its own); its generator is never drawn from."""
        s = getattr(self._local, "sampler", None)
        if s is None or s.params != params:
            s = self._local.sampler = Sampler(params)
        return s

    def prepare(self, rows: np.ndarray, start: int, stop: int, params: SamplingParams,
                recent: Callable[[int], Sequence[int]]) -> list:
        """For rows[start:stop]: each row's argmax (greedy) or its distribution (ids, p) after the
        filters, with ``recent(i)`` the tokens row i's repeat penalty sees."""
        def work(idx: range) -> list:
            s = self._sampler(params)
            if params.greedy:
                return [s.argmax(rows[i], recent(i)) for i in idx]
            return [s.distribution(rows[i], recent(i)) for i in idx]

        parts = [range(start + j, stop, self.threads) for j in range(self.threads)]
        done = list(self._ex.map(work, [p for p in parts if len(p)]))
        out: list = [None] * (stop - start)
        for j, got in enumerate(done):
            out[j::self.threads] = got
        return out

    def close(self) -> None:
        self._ex.shutdown(wait=False)
