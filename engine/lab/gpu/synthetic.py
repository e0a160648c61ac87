"""Random-weight GGUFs of named dense shapes, for timing decode and verify cost anywhere.

The file is a qwen2-architecture model with K-quantized random weights and the real
Qwen2 tokenizer (its ``tokenizer.*`` keys are copied byte for byte from the vocab-only
GGUF that llama.cpp ships, ``engine/lab/gpu/ggml-vocab-qwen2.gguf``). Weights are a tiled
random block pattern with small, finite scales: the model is useless as a language model
but reads exactly the bytes a real model of that shape and quantization reads per token.

Dependency-free (no ``gguf`` package): the writer streams tensor data in large chunks, so
a 17 GB file costs what the disk writes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

VOCAB_GGUF = Path(__file__).with_name("ggml-vocab-qwen2.gguf")

ALIGN = 32
Q4_K, Q6_K, F32 = 12, 14, 0
_BLOCK_BYTES = {Q4_K: 144, Q6_K: 210}  # bytes per 256-value super-block


@dataclass(frozen=True)
class Shape:
    name: str
    hidden: int
    layers: int
    ffn: int
    heads: int
    kv_heads: int
    mix: str = "q4_k_m"  # q4_k (every matrix Q4_K) | q4_k_m (llama.cpp's Q4_K_M choice of Q6_K tensors)
    ctx_train: int = 32768
    note: str = ""

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape("tiny", 256, 2, 512, 4, 2, mix="q4_k", ctx_train=4096, note="for tests"),
        Shape("dense-1.5b", 1536, 28, 8960, 12, 2, note="Qwen2.5-1.5B layout"),
        Shape("dense-7b", 3584, 28, 18944, 28, 4, note="Qwen2.5-7B layout"),
        Shape("dense-27b", 5120, 64, 22016, 40, 8, note="27B-class dense (Qwen2.5-32B layout, narrower FFN)"),
        Shape(
            "dense-30b", 5120, 64, 24576, 40, 8, mix="q4_k", note="the 30B shape of ../shared/gpu (all Q4_K)"
        ),
        Shape("dense-32b", 5120, 64, 27648, 40, 8, note="Qwen2.5-32B layout"),
    )
}


def get_shape(name: str) -> Shape:
    if name in SHAPES:
        return SHAPES[name]
    raise ValueError(f"unknown synthetic shape {name!r} (known: {', '.join(SHAPES)})")


# ---- the vocab-only GGUF's tokenizer keys, copied raw ---------------------------------

_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def _skip_value(buf: memoryview, off: int, t: int) -> int:
    if t in _SCALAR_SIZES:
        return off + _SCALAR_SIZES[t]
    if t == 8:
        (n,) = struct.unpack_from("<Q", buf, off)
        return off + 8 + n
    if t == 9:
        et, n = struct.unpack_from("<IQ", buf, off)
        off += 12
        if et in _SCALAR_SIZES:
            return off + n * _SCALAR_SIZES[et]
        for _ in range(n):
            off = _skip_value(buf, off, et)
        return off
    raise ValueError(f"unknown GGUF value type {t}")


def tokenizer_kv(vocab_path: Path = VOCAB_GGUF) -> tuple[list[bytes], int]:
    """The raw KV records (key + type + value bytes) of the file's ``tokenizer.*`` keys, and n_vocab."""
    data = memoryview(vocab_path.read_bytes())
    if bytes(data[:4]) != b"GGUF":
        raise ValueError(f"{vocab_path} is not a GGUF file")
    _version, _n_t, n_kv = struct.unpack_from("<IQQ", data, 4)
    off = 24
    out: list[bytes] = []
    n_vocab = 0
    for _ in range(n_kv):
        start = off
        (klen,) = struct.unpack_from("<Q", data, off)
        key = bytes(data[off + 8 : off + 8 + klen]).decode()
        off += 8 + klen
        (t,) = struct.unpack_from("<I", data, off)
        off += 4
        if key == "tokenizer.ggml.tokens":
            n_vocab = struct.unpack_from("<Q", data, off + 4)[0]
        off = _skip_value(data, off, t)
        if key.startswith("tokenizer."):
            out.append(bytes(data[start:off]))
    if not n_vocab:
        raise ValueError(f"{vocab_path} has no tokenizer.ggml.tokens")
    return out, int(n_vocab)


# ---- writing --------------------------------------------------------------------------


def _kv_str(key: str, val: str) -> bytes:
    k, v = key.encode(), val.encode()
    return struct.pack("<Q", len(k)) + k + struct.pack("<IQ", 8, len(v)) + v


def _kv_u32(key: str, val: int) -> bytes:
    k = key.encode()
    return struct.pack("<Q", len(k)) + k + struct.pack("<II", 4, val)


def _kv_f32(key: str, val: float) -> bytes:
    k = key.encode()
    return struct.pack("<Q", len(k)) + k + struct.pack("<If", 6, val)


@dataclass(frozen=True)
class _Tensor:
    name: str
    rows: int  # 1 for vectors
    cols: int
    qtype: int

    @property
    def nbytes(self) -> int:
        if self.qtype == F32:
            return self.rows * self.cols * 4
        return self.rows * self.cols // 256 * _BLOCK_BYTES[self.qtype]


def _more_bits(i: int, n: int) -> bool:
    """llama.cpp's use_more_bits: which layers Q4_K_M gives Q6_K attn_v / ffn_down."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def _tensors(shape: Shape, n_vocab: int) -> list[_Tensor]:
    H, F, hd = shape.hidden, shape.ffn, shape.head_dim
    if H % 256 or F % 256:
        raise ValueError("hidden and ffn sizes must be multiples of 256 (K-quant rows)")
    m = shape.mix == "q4_k_m"
    ts = [_Tensor("token_embd.weight", n_vocab, H, Q4_K), _Tensor("output_norm.weight", 1, H, F32)]
    ts.append(_Tensor("output.weight", n_vocab, H, Q6_K if m else Q4_K))
    L = shape.layers
    for i in range(L):
        p = f"blk.{i}."
        more = m and _more_bits(i, L)
        ts += [
            _Tensor(p + "attn_norm.weight", 1, H, F32),
            _Tensor(p + "ffn_norm.weight", 1, H, F32),
            _Tensor(p + "attn_q.weight", shape.heads * hd, H, Q4_K),
            _Tensor(p + "attn_q.bias", 1, shape.heads * hd, F32),
            _Tensor(p + "attn_k.weight", shape.kv_heads * hd, H, Q4_K),
            _Tensor(p + "attn_k.bias", 1, shape.kv_heads * hd, F32),
            _Tensor(p + "attn_v.weight", shape.kv_heads * hd, H, Q6_K if more else Q4_K),
            _Tensor(p + "attn_v.bias", 1, shape.kv_heads * hd, F32),
            _Tensor(p + "attn_output.weight", H, shape.heads * hd, Q4_K),
            _Tensor(p + "ffn_gate.weight", F, H, Q4_K),
            _Tensor(p + "ffn_up.weight", F, H, Q4_K),
            _Tensor(p + "ffn_down.weight", H, F, Q6_K if more else Q4_K),
        ]
    return ts


def _pad(n: int) -> int:
    return (-n) % ALIGN


def estimate_size(shape: Shape, n_vocab: int = 151936) -> int:
    """Approximate file size in bytes (tensor data only)."""
    return sum(t.nbytes + _pad(t.nbytes) for t in _tensors(shape, n_vocab))


def _pattern(qtype: int, blocks: int, rng: np.random.Generator) -> bytes:
    size = _BLOCK_BYTES[qtype]
    pat = rng.integers(0, 256, size=(blocks, size), dtype=np.uint8)
    d = np.array([0.0005], dtype=np.float16).view(np.uint8)
    if qtype == Q4_K:  # d, dmin first
        pat[:, 0:2] = d
        pat[:, 2:4] = d
    else:  # Q6_K: ql[128] qh[64] scales[16] (int8) d
        pat[:, 208:210] = d
    return pat.tobytes()


def write_synthetic(
    shape: Shape | str,
    out: str | Path,
    *,
    vocab_path: Path = VOCAB_GGUF,
    progress: Callable[[str, float], None] | None = None,
    seed: int = 0,
) -> Path:
    """Write the random-weight GGUF of ``shape`` to ``out``; returns its path."""
    shape = get_shape(shape) if isinstance(shape, str) else shape
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tok_kv, n_vocab = tokenizer_kv(vocab_path)
    tensors = _tensors(shape, n_vocab)
    kv = [
        _kv_str("general.architecture", "qwen2"),
        _kv_str("general.name", f"synthetic-{shape.name}"),
        _kv_u32("general.file_type", 15 if shape.mix == "q4_k_m" else 14),
        _kv_u32("general.alignment", ALIGN),
        _kv_u32("qwen2.context_length", shape.ctx_train),
        _kv_u32("qwen2.embedding_length", shape.hidden),
        _kv_u32("qwen2.block_count", shape.layers),
        _kv_u32("qwen2.feed_forward_length", shape.ffn),
        _kv_u32("qwen2.attention.head_count", shape.heads),
        _kv_u32("qwen2.attention.head_count_kv", shape.kv_heads),
        _kv_f32("qwen2.rope.freq_base", 1e6),
        _kv_f32("qwen2.attention.layer_norm_rms_epsilon", 1e-6),
        *tok_kv,
    ]
    header = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)))
    for rec in kv:
        header += rec
    offset = 0
    for t in tensors:
        name = t.name.encode()
        dims = (t.cols,) if t.rows == 1 else (t.cols, t.rows)
        header += struct.pack("<Q", len(name)) + name + struct.pack("<I", len(dims))
        header += struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", t.qtype, offset)
        offset += t.nbytes + _pad(t.nbytes)
    header += b"\0" * _pad(len(header))
    total = offset
    rng = np.random.default_rng(seed)
    chunk_blocks = 1 << 16  # 9 MB of Q4_K per write
    patterns = {q: _pattern(q, chunk_blocks, rng) for q in (Q4_K, Q6_K)}
    ones = np.ones(max(shape.hidden, shape.heads * shape.head_dim), dtype=np.float32)
    done = 0
    last_report = -1.0
    tmp = out.with_name(out.name + ".part")
    with open(tmp, "wb") as f:
        f.write(header)
        for t in tensors:
            if t.qtype == F32:
                vec = ones[: t.cols] if t.name.endswith("norm.weight") else np.zeros(t.cols, dtype=np.float32)
                f.write(vec.tobytes())
            else:
                pat = patterns[t.qtype]
                left = t.nbytes
                while left > 0:
                    n = min(left, len(pat))
                    f.write(pat[:n])
                    left -= n
            f.write(b"\0" * _pad(t.nbytes))
            done += t.nbytes + _pad(t.nbytes)
            frac = done / total
            if progress is not None and frac - last_report >= 0.02:
                last_report = frac
                progress(f"writing synthetic {shape.name}", frac)
    tmp.replace(out)
    return out


def synthetic_info(shape: Shape | str, n_vocab: int = 151936):
    """The header ``engine.gguf_info.read_gguf`` would return for the shape's file, without writing it
    (fit checks and estimates of shapes too big to write here)."""
    from engine.gguf_info import GGUFInfo, TensorInfo

    shape = get_shape(shape) if isinstance(shape, str) else shape
    meta = {
        "general.architecture": "qwen2",
        "general.name": f"synthetic-{shape.name}",
        "qwen2.context_length": shape.ctx_train,
        "qwen2.embedding_length": shape.hidden,
        "qwen2.block_count": shape.layers,
        "qwen2.feed_forward_length": shape.ffn,
        "qwen2.attention.head_count": shape.heads,
        "qwen2.attention.head_count_kv": shape.kv_heads,
    }
    tensors, off = [], 0
    for t in _tensors(shape, n_vocab):
        dims = (t.cols,) if t.rows == 1 else (t.cols, t.rows)
        tensors.append(TensorInfo(t.name, dims, t.qtype, off))
        off += t.nbytes + _pad(t.nbytes)
    tokens = tuple(f"t{i}" for i in range(n_vocab))
    return GGUFInfo(f"synthetic-{shape.name}.gguf", 3, meta, tuple(tensors), 0, off, tokens)
