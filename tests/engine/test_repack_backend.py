"""Repacked CPU weights without AMX (engine.repack_backend) on the default target model."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.real_model


def test_repacking_without_amx_places_the_q4_matrices_there_and_decodes_like_plain(tmp_path) -> None:
    from engine import backend, repack_backend
    from engine.modelpack import default_target_path

    path = str(default_target_path())
    names = repack_backend.repack_tensors(path)
    assert len(names) > 100 and all(n.startswith("blk.") for n in names)  # the Q4_K matrices; Q6_K ones stay plain
    if repack_backend.REPACK_BUFT not in repack_backend.extra_buffer_types():
        pytest.skip("this llama.cpp build has no repacked CPU layout")
    log = tmp_path / "llama.log"
    backend.init(str(log))
    models = [backend.Model(path, gpu_layers=0, extra_buffers=False),
              backend.Model(path, gpu_layers=0, extra_buffers=True, amx=False)]
    try:
        assert [m.layout for m in models] == ["plain", "repacked-noamx"]
        text = log.read_text()
        assert "CPU_REPACK model buffer size" in text and "AMX model buffer size" not in text
        prompt = models[0].tokenize("def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n    if n")
        rows = []
        for m in models:
            ctx = backend.Context(m, n_ctx=256, n_batch=64, threads=2, flash_attn=False)
            try:
                out = ctx.decode(prompt, 0, all_logits=True)  # a batched pass: where AMX's kernels died
                assert out is not None
                rows.append(np.array(out[-8:], dtype=np.float32))
            finally:
                ctx.close()
        assert (rows[0].argmax(axis=1) == rows[1].argmax(axis=1)).all()
        probs = [np.exp(r - r.max(axis=1, keepdims=True)) for r in rows]
        probs = [p / p.sum(axis=1, keepdims=True) for p in probs]
        assert np.abs(probs[0] - probs[1]).max() < 0.05  # the same model: only the kernels' rounding differs
    finally:
        for m in models:
            m.close()
        backend.init("")
