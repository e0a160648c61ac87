"""Writes tiny random-weight GGUFs for engine tests (qwen2 architecture, SPM vocabulary)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import gguf
import numpy as np


def write_tiny_model(
    path: Path,
    *,
    vocab: int = 12,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    ffn: int = 128,
    seed: int = 0,
    scale: float = 0.35,
    tied: bool = False,
    byte_fallback: bool = False,
    chat_template: str | None = None,
    special_tokens: Sequence[str] = (),
) -> Path:
    """A small model whose next-token distributions are far from degenerate.

    Token 0 is <unk>, 1 <s>, 2 </s>; then (with byte_fallback, so that any text can be
    tokenized) the 256 byte tokens; the rest are single letters. The end-of-sequence
    token's output row is zero (logit 0), so sequences end early only now and then.
    ``chat_template`` is written as ``tokenizer.chat_template``; ``special_tokens`` (chat
    markup such as ``<|eot_id|>``) become control tokens right after ``</s>``.
    """
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(str(path), "qwen2")
    w.add_name(f"tiny-{vocab}v-{hidden}h-{seed}")
    w.add_context_length(512)
    w.add_embedding_length(hidden)
    w.add_block_count(layers)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(0)
    add_spm_vocab(w, vocab, byte_fallback=byte_fallback, special_tokens=special_tokens)
    if chat_template is not None:
        w.add_chat_template(chat_template)

    def mat(rows: int, cols: int, s: float = scale) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * s / np.sqrt(cols) * 4).astype(np.float32)

    hd = hidden // heads
    emb = mat(vocab, hidden, 1.0)
    w.add_tensor("token_embd.weight", emb)
    w.add_tensor("output_norm.weight", np.ones(hidden, dtype=np.float32))
    if not tied:
        out = mat(vocab, hidden, 1.0)
        out[2] = 0.0
        w.add_tensor("output.weight", out)
    for i in range(layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(hidden, dtype=np.float32))
        w.add_tensor(p + "ffn_norm.weight", np.ones(hidden, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", mat(heads * hd, hidden))
        w.add_tensor(p + "attn_q.bias", np.zeros(heads * hd, dtype=np.float32))
        w.add_tensor(p + "attn_k.weight", mat(kv_heads * hd, hidden))
        w.add_tensor(p + "attn_k.bias", np.zeros(kv_heads * hd, dtype=np.float32))
        w.add_tensor(p + "attn_v.weight", mat(kv_heads * hd, hidden))
        w.add_tensor(p + "attn_v.bias", np.zeros(kv_heads * hd, dtype=np.float32))
        w.add_tensor(p + "attn_output.weight", mat(hidden, heads * hd))
        w.add_tensor(p + "ffn_gate.weight", mat(ffn, hidden))
        w.add_tensor(p + "ffn_up.weight", mat(ffn, hidden))
        w.add_tensor(p + "ffn_down.weight", mat(hidden, ffn))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file(progress=False)
    w.close()
    return path


def add_spm_vocab(w: gguf.GGUFWriter, vocab: int, *, byte_fallback: bool = False,
                  special_tokens: Sequence[str] = ()) -> None:
    """An SPM ('llama') vocabulary: <unk>, <s>, </s>, any extra control tokens, optionally the
    256 byte tokens, then letters."""
    special = ["<unk>", "<s>", "</s>", *special_tokens]
    byte_toks = [f"<0x{b:02X}>" for b in range(256)] if byte_fallback else []
    n_plain = vocab - len(special) - len(byte_toks)
    if n_plain < 1:
        raise ValueError("vocab too small")
    plain = [chr(ord("a") + i) if i < 26 else f"t{i}" for i in range(n_plain)]
    w.add_tokenizer_model("llama")
    w.add_token_list([t.encode() for t in special + byte_toks + plain])
    w.add_token_scores([0.0] * (len(special) + len(byte_toks)) + [-float(i) for i in range(n_plain)])
    w.add_token_types([2] + [3] * (len(special) - 1) + [6] * len(byte_toks) + [1] * n_plain)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(False)
