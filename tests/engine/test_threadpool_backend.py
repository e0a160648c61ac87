"""engine.threadpool_backend: a persistent ggml threadpool attached to a context, as llama-server's."""

from __future__ import annotations

import numpy as np

from engine import backend
from engine.threadpool_backend import Threadpool, api


def _logits(ctx: backend.Context, tokens: list[int]) -> np.ndarray:
    ctx.clear()
    rows = ctx.decode(tokens, 0, all_logits=True)
    assert rows is not None
    return rows.copy()


def test_a_context_decodes_the_same_with_a_pool_attached_and_after_it_is_freed(tiny_gguf) -> None:
    assert api() is not None, "the ggml threadpool functions were not found beside libllama"
    model = backend.Model(str(tiny_gguf), gpu_layers=0)
    ctx = backend.Context(model, n_ctx=128, n_batch=32, threads=2)
    try:
        tokens = [1, 5, 9, 2, 7, 3, 8, 4]
        before = _logits(ctx, tokens)
        pool = Threadpool(ctx.ptr, 2, poll=50)
        with_pool = [_logits(ctx, tokens) for _ in range(3)]
        pool.close()
        pool.close()  # a second close is a no-op, not a double free
        after = _logits(ctx, tokens)
    finally:
        ctx.close()
        model.close()
    for got in [*with_pool, after]:
        np.testing.assert_allclose(got, before, rtol=1e-5, atol=1e-5)
