"""The host buffer KV state copies pass through: reserved once for the whole context, faulted in
4 KiB pages as the sequence grows.

A numpy array this size asks the kernel for huge pages, and where memory is fragmented (two
loads of the model's weights beside it) a huge-page fault waits for compaction: the first copy
into a fresh 57 MB buffer took 150-190 ms against 28 ms in small pages (MEASUREMENTS.md). A
buffer sized for the sequence so far was also allocated again, and faulted again, each time
the sequence outgrew it. Anonymous pages cost nothing until touched, so the reservation is the
context's worth and is never replaced.
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
    context, plus the state's fixed part and some slack."""
    per_token = state_bytes / max(tokens, 1)
    return int(per_token * n_ctx * 1.02) + (1 << 20)
