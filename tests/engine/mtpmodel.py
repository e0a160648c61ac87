"""Writes a tiny random-weight GGUF with one MTP (NextN) head, for the MTP drafter tests.

Architecture ``glm4moe`` (GLM-4.5 layout): its trunk is plain attention (a normal KV
cache, so the engine's rollback by ``llama_memory_seq_rm`` works), and the vendored
llama.cpp has a ``LLM_GRAPH_TYPE_DECODER_MTP`` graph for it (src/models/glm4-moe.cpp).
The dense Qwen3.5 (``qwen35``) was not used: its trunk is hybrid (gated-delta-net
recurrent memory), which needs ``n_rs_seq`` snapshots for any partial rollback.

Every trunk block is dense (``leading_dense_block_count = layers``); the NextN block
``blk.{layers}`` is an MoE block (GLM's MTP graph asserts ``ffn_gate_inp``) with two
small experts and one shared expert, plus ``nextn.eh_proj``/``enorm``/``hnorm``. The
head reuses the trunk's ``token_embd``/``output``/``output_norm`` (the optional
``nextn.embed_tokens``/``shared_head_*`` tensors are left out).

Token 0 is <unk>, 1 <s>, 2 </s>; the rest are single letters (SPM ``llama`` vocabulary).
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

from tests.engine.tinymodel import add_spm_vocab

ARCH = "glm4moe"


def write_mtp_model(
    path: Path,
    *,
    vocab: int = 16,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    ffn: int = 128,
    experts: int = 2,
    expert_ffn: int = 32,
    seed: int = 0,
    scale: float = 0.35,
    mtp_copy: bool = True,
) -> Path:
    """Write the model; ``mtp_copy`` makes the head's output mostly follow the trunk's.

    With random weights a head would agree with the target only by chance (1/vocab). With
    ``mtp_copy`` the NextN block's ``eh_proj`` passes the (normed) target hidden state
    through almost unchanged and its attention/FFN outputs are scaled down, so the head's
    greedy token is usually the token the target itself would emit *at that position*
    (a stale but correlated guess): drafts are then accepted now and then, which the
    speculation test needs to exercise both the accept and the reject paths.
    """
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(str(path), ARCH)
    w.add_name(f"tiny-mtp-{vocab}v-{hidden}h-{seed}")
    w.add_context_length(512)
    w.add_embedding_length(hidden)
    w.add_block_count(layers + 1)  # trunk + one NextN block
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(0)
    w.add_uint32(f"{ARCH}.nextn_predict_layers", 1)
    w.add_uint32(f"{ARCH}.leading_dense_block_count", layers)
    w.add_uint32(f"{ARCH}.expert_count", experts)
    w.add_uint32(f"{ARCH}.expert_used_count", 1)
    w.add_uint32(f"{ARCH}.expert_shared_count", 1)
    w.add_uint32(f"{ARCH}.expert_feed_forward_length", expert_ffn)
    w.add_bool(f"{ARCH}.expert_weights_norm", True)
    w.add_float32(f"{ARCH}.expert_weights_scale", 1.0)
    w.add_uint32(f"{ARCH}.expert_gating_func", 2)  # sigmoid, as GLM-4.5
    add_spm_vocab(w, vocab)

    def mat(rows: int, cols: int, s: float = scale) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * s / np.sqrt(cols) * 4).astype(np.float32)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    hd = hidden // heads

    def attention(p: str, s: float = scale) -> None:
        w.add_tensor(p + "attn_norm.weight", ones(hidden))
        w.add_tensor(p + "post_attention_norm.weight", ones(hidden))  # GLM: the pre-FFN norm
        w.add_tensor(p + "attn_q.weight", mat(heads * hd, hidden, s))
        w.add_tensor(p + "attn_q.bias", np.zeros(heads * hd, dtype=np.float32))
        w.add_tensor(p + "attn_k.weight", mat(kv_heads * hd, hidden, s))
        w.add_tensor(p + "attn_k.bias", np.zeros(kv_heads * hd, dtype=np.float32))
        w.add_tensor(p + "attn_v.weight", mat(kv_heads * hd, hidden, s))
        w.add_tensor(p + "attn_v.bias", np.zeros(kv_heads * hd, dtype=np.float32))
        w.add_tensor(p + "attn_output.weight", mat(hidden, heads * hd, s))

    emb = mat(vocab, hidden, 1.0)
    out = mat(vocab, hidden, 1.0)
    out[2] = 0.0  # </s> has logit 0: sequences end only now and then
    w.add_tensor("token_embd.weight", emb)
    w.add_tensor("output_norm.weight", ones(hidden))
    w.add_tensor("output.weight", out)
    for i in range(layers):
        p = f"blk.{i}."
        attention(p)
        w.add_tensor(p + "ffn_gate.weight", mat(ffn, hidden))
        w.add_tensor(p + "ffn_up.weight", mat(ffn, hidden))
        w.add_tensor(p + "ffn_down.weight", mat(hidden, ffn))

    # the NextN block: blk.{layers}
    p = f"blk.{layers}."
    small = 0.05 if mtp_copy else scale
    attention(p, small)
    w.add_tensor(p + "ffn_gate_inp.weight", mat(experts, hidden))
    w.add_tensor(p + "exp_probs_b.bias", np.zeros(experts, dtype=np.float32))
    w.add_tensor(
        p + "ffn_gate_exps.weight", np.stack([mat(expert_ffn, hidden, small) for _ in range(experts)])
    )
    w.add_tensor(p + "ffn_up_exps.weight", np.stack([mat(expert_ffn, hidden, small) for _ in range(experts)]))
    w.add_tensor(
        p + "ffn_down_exps.weight", np.stack([mat(hidden, expert_ffn, small) for _ in range(experts)])
    )
    w.add_tensor(p + "ffn_gate_shexp.weight", mat(expert_ffn, hidden, small))
    w.add_tensor(p + "ffn_up_shexp.weight", mat(expert_ffn, hidden, small))
    w.add_tensor(p + "ffn_down_shexp.weight", mat(hidden, expert_ffn, small))
    # eh_proj maps concat(enorm(embed(token)), hnorm(h)) [2*hidden] -> hidden
    eh = mat(hidden, 2 * hidden)
    if mtp_copy:
        eh[:, :hidden] *= 0.1
        eh[:, hidden:] = np.eye(hidden, dtype=np.float32)
    w.add_tensor(p + "nextn.eh_proj.weight", eh)
    w.add_tensor(p + "nextn.enorm.weight", ones(hidden))
    w.add_tensor(p + "nextn.hnorm.weight", ones(hidden))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file(progress=False)
    w.close()
    return path
