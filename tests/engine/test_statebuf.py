"""engine.statebuf: the KV state copies' buffer, reserved once in small pages."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from engine import statebuf


def _vm_flags(addr: int) -> list[str]:
    """The VmFlags of the mapping that holds ``addr`` (Linux's /proc/self/smaps)."""
    found = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                found = lo <= addr < hi
            elif found and head == "VmFlags:":
                return line.split()[1:]
    raise AssertionError("mapping not found")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="smaps and huge-page advice are Linux's")
def test_the_buffer_asks_for_small_pages() -> None:
    """A huge-page fault in fragmented memory may wait for compaction: the buffer opts out."""
    buf = statebuf.reserve(64 << 20)
    assert buf.nbytes == 64 << 20 and buf.flags.writeable
    buf[:: 1 << 20] = 7
    assert "nh" in _vm_flags(buf.ctypes.data) and "hg" not in _vm_flags(buf.ctypes.data)


def test_a_reservation_covers_the_whole_context() -> None:
    assert statebuf.context_bytes(28_000 * 100 + 64, 100, 8192) >= 28_000 * 8192
    assert statebuf.context_bytes(64, 0, 8192) >= 64


def test_one_buffer_serves_a_sequence_as_it_grows(tmp_path) -> None:
    """Sized for the sequence so far, the buffer was allocated (and faulted) again each time the
    sequence outgrew it: once per edit on a 2-core CPU, 100-270 ms each."""
    from engine import backend
    from tests.engine.tinymodel import write_tiny_model

    path = str(write_tiny_model(tmp_path / "tiny.gguf", vocab=300, hidden=256, heads=4, kv_heads=4,
                                byte_fallback=True))
    backend.init()
    model = backend.Model(path, gpu_layers=0)
    main, side = (backend.Context(model, n_ctx=2048, n_batch=512, threads=1) for _ in range(2))
    try:
        toks = [int(t) for t in np.random.default_rng(0).integers(10, 290, 1600)]
        main.decode(toks[:100], 0, all_logits=False)
        assert main.copy_seq_to(side)
        first = main._state_buf
        assert first is not None and first is side._state_buf
        side.decode(toks[100:], 100, all_logits=True)
        want = np.array(side.decode([toks[-1]], 1600, all_logits=False)[-1])
        side.truncate(1600)
        assert side.copy_seq_to(main)  # 16 times the state the buffer was first taken for
        assert main._state_buf is first and side._state_buf is first
        got = main.decode([toks[-1]], 1600, all_logits=False)
        assert got is not None and np.allclose(got[-1], want, atol=1e-4)
    finally:
        main.close()
        side.close()
        model.close()
