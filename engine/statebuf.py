"""The host buffer KV state copies pass through: reserved once for the whole context, faulted in
4 KiB pages as the sequence grows.

A buffer sized for the sequence so far was allocated again, and faulted again, each time the
sequence outgrew it: on the project's VM a fresh page right after a model load or a long prefill
cost up to 5 ms a MB, and an edit's first copies took 84-266 ms against 9 ms warm
(MEASUREMENTS.md). Anonymous pages cost nothing until touched, so the reservation is the
context's worth and is never replaced. Small pages guard against a huge-page fault waiting for
compaction where memory is fragmented (two loads of the weights beside it); that was not
measured as a gain here.
"""

from __future__ import annotations

import mmap

import numpy as np


def reserve(nbytes: int) -> np.ndarray:
    """A writable uint8 array of ``nbytes`` backed by anonymous memory in small pages."""
    m = mmap.mmap(-1, max(int(nbytes), mmap.PAGESIZE), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    advice = getattr(mmap, "MADV_NOHUGEPAGE", None)  # Linux only; elsewhere the kernel's default
    if advice is not None:
        try:
            m.madvise(advice)
        except OSError:  # a kernel without transparent huge pages
            pass
    return np.frombuffer(m, np.uint8)


def context_bytes(state_bytes: int, tokens: int, n_ctx: int) -> int:
    """A reservation for a full context from one state's size: its per-token share times the
    context, plus the state's fixed part and some slack; never less than the state itself."""
    per_token = state_bytes / max(tokens, 1)
    return max(int(per_token * n_ctx * 1.02) + (1 << 20), state_bytes)
