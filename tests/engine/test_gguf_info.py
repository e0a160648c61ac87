from __future__ import annotations

from pathlib import Path

import pytest

from engine.gguf_info import GGUFError, read_gguf, vocab_mismatch
from tests.engine.tinymodel import write_tiny_model


def test_reads_a_model(tiny_gguf: Path) -> None:
    info = read_gguf(tiny_gguf)
    assert info.arch == "qwen2"
    assert info.n_vocab == 12
    assert info.meta("block_count") == 2
    assert info.mtp_layers == 0
    assert info.quant == "F32"
    # untied: the embedding is a row lookup, not read whole per token
    emb = next(t for t in info.tensors if t.name == "token_embd.weight")
    assert info.bytes_per_token == info.weight_bytes - emb.n_bytes


def test_tied_embeddings_count_once(tmp_path: Path) -> None:
    info = read_gguf(write_tiny_model(tmp_path / "tied.gguf", tied=True))
    assert info.bytes_per_token == info.weight_bytes


def test_missing_truncated_and_foreign_files(tmp_path: Path, tiny_gguf: Path) -> None:
    with pytest.raises(GGUFError, match="not found"):
        read_gguf(tmp_path / "nope.gguf")
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(GGUFError, match="not a GGUF"):
        read_gguf(junk)
    data = tiny_gguf.read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) - 1000])
    with pytest.raises(GGUFError, match="truncated"):
        read_gguf(cut)
    head = tmp_path / "head.gguf"
    head.write_bytes(data[:40])
    with pytest.raises(GGUFError, match="truncated"):
        read_gguf(head)


def test_vocab_mismatch(tmp_path: Path, tiny_gguf: Path) -> None:
    a = read_gguf(tiny_gguf)
    assert vocab_mismatch(a, read_gguf(write_tiny_model(tmp_path / "b.gguf", seed=3))) is None
    other = read_gguf(write_tiny_model(tmp_path / "c.gguf", vocab=400))
    assert "vocabulary sizes differ" in (vocab_mismatch(a, other) or "")
