"""The synthetic GGUF writer: a loadable qwen2 file with the real Qwen2 tokenizer."""

from __future__ import annotations

import pytest

from engine import backend  # noqa: I001  (llama_cpp before numpy)
from engine.gguf_info import read_gguf
from engine.lab.gpu.synthetic import SHAPES, estimate_size, get_shape, synthetic_info, tokenizer_kv


def test_tokenizer_keys_are_copied_from_the_vocab_gguf() -> None:
    recs, n_vocab = tokenizer_kv()
    assert n_vocab == 151936
    keys = {r[8 : 8 + int.from_bytes(r[:8], "little")].decode() for r in recs}
    assert {"tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.merges"} <= keys


def test_tiny_file_matches_its_header_description(tiny_synth) -> None:
    info = read_gguf(tiny_synth)
    assert info.arch == "qwen2" and info.n_vocab == 151936
    assert info.meta("block_count") == 2
    want = synthetic_info("tiny")
    assert info.bytes_per_token == want.bytes_per_token
    assert [t.name for t in info.tensors] == [t.name for t in want.tensors]


def test_tiny_model_loads_tokenizes_and_decodes(tiny_synth) -> None:
    import numpy as np

    m = backend.Model(str(tiny_synth), gpu_layers=0)
    try:
        ctx = backend.Context(m, n_ctx=256, threads=1)
        toks = m.tokenize("def add(a, b):\n    return a + b\n")
        assert m.detokenize(toks) == "def add(a, b):\n    return a + b\n"  # the real Qwen2 BPE
        rows = ctx.decode(toks, 0, all_logits=True)
        assert rows is not None and rows.shape == (len(toks), 151936)
        assert np.isfinite(rows).all()
        ctx.close()
    finally:
        m.close()


def test_shapes() -> None:
    assert estimate_size(get_shape("dense-27b")) / 1e9 == pytest.approx(16.5, abs=0.5)
    assert 1.0 < estimate_size(get_shape("dense-1.5b")) / 1e9 < 1.3
    assert {"tiny", "dense-1.5b", "dense-27b"} <= set(SHAPES)
    with pytest.raises(ValueError, match="unknown synthetic shape"):
        get_shape("dense-9000b")
