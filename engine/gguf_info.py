"""A pure-Python GGUF header reader: validates files before llama.cpp sees them and
describes them (architecture, quantization, tensors, MTP heads, weight bytes per token).

Reading only the header means a truncated, missing or non-GGUF file becomes a one-line
``GGUFError`` instead of a crash inside llama.cpp.
"""

from __future__ import annotations

import functools
import hashlib
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

GGUF_MAGIC = b"GGUF"

# ggml type id -> (block size in elements, bytes per block)
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292), 16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98), 19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
    26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66), 39: ("MXFP4", 32, 17),
}

FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
    23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
    29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
}

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


class GGUFError(ValueError):
    """The file is missing, truncated or not a GGUF model. The message is one line."""


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    type_id: int
    offset: int

    @property
    def type_name(self) -> str:
        return GGML_TYPES.get(self.type_id, (f"type{self.type_id}", 1, 0))[0]

    @property
    def n_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def n_bytes(self) -> int:
        if self.type_id not in GGML_TYPES:
            raise GGUFError(f"tensor {self.name} has unknown ggml type {self.type_id}")
        _, block, size = GGML_TYPES[self.type_id]
        return self.n_elements // block * size


@dataclass(frozen=True)
class GGUFInfo:
    path: str
    version: int
    metadata: dict[str, Any]
    tensors: tuple[TensorInfo, ...]
    data_offset: int
    file_size: int
    tokens: tuple[str, ...] = field(default=(), repr=False)
    token_types: tuple[int, ...] = field(default=(), repr=False)

    @property
    def arch(self) -> str:
        return str(self.metadata.get("general.architecture", "unknown"))

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name") or Path(self.path).stem)

    @property
    def quant(self) -> str:
        ft = self.metadata.get("general.file_type")
        if isinstance(ft, int) and ft in FILE_TYPES:
            return FILE_TYPES[ft]
        # fall back to the most common weight type
        counts: dict[str, int] = {}
        for t in self.tensors:
            if len(t.shape) >= 2:
                counts[t.type_name] = counts.get(t.type_name, 0) + t.n_bytes
        return max(counts, key=lambda k: counts[k]) if counts else "unknown"

    def meta(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(f"{self.arch}.{key}", default)

    @property
    def n_vocab(self) -> int:
        return len(self.tokens)

    @property
    def weight_bytes(self) -> int:
        return sum(t.n_bytes for t in self.tensors)

    @property
    def mtp_layers(self) -> int:
        """Number of MTP / NextN prediction layers the file ships (0 when none)."""
        n = self.meta("nextn_predict_layers", 0) or 0
        if n:
            return int(n)
        blocks = {t.name.split(".")[1] for t in self.tensors if ".nextn." in t.name or ".mtp." in t.name}
        return len(blocks)

    @property
    def bytes_per_token(self) -> int:
        """Bytes of weights one decode step reads.

        The token embedding is a row lookup (not read whole) unless it doubles as the
        output matrix (tied embeddings, counted once). MoE expert tensors count only the
        active experts' share. MTP heads are not part of the plain forward pass.
        """
        names = {t.name for t in self.tensors}
        tied = "output.weight" not in names
        n_expert = int(self.meta("expert_count", 0) or 0)
        n_used = int(self.meta("expert_used_count", 0) or 0)
        total = 0.0
        for t in self.tensors:
            if ".nextn." in t.name or ".mtp." in t.name:
                continue
            if t.name.startswith("token_embd.") and not tied:
                continue
            b = float(t.n_bytes)
            if n_expert and n_used and "_exps" in t.name:
                b *= n_used / n_expert
            total += b
        return int(total)

    def token_text(self, key: str) -> str:
        """The text of the token a metadata key names (``tokenizer.ggml.bos_token_id``), or ''."""
        i = self.metadata.get(key)
        return self.tokens[i] if isinstance(i, int) and 0 <= i < len(self.tokens) else ""

    @property
    def special_tokens(self) -> tuple[str, ...]:
        """Control and user-defined tokens: the chat markup of the model's family (turn and call markers)."""
        return tuple(t for t, k in zip(self.tokens, self.token_types, strict=False) if k in (3, 4) and len(t) < 48)

    def vocab_digest(self) -> str:
        h = hashlib.sha256()
        for tok in self.tokens:
            h.update(tok.encode("utf-8", "surrogatepass") + b"\0")
        return h.hexdigest()[:16]


class _Reader:
    def __init__(self, f: BinaryIO, path: str, size: int) -> None:
        self.f = f
        self.path = path
        self.size = size

    def read(self, n: int) -> bytes:
        b = self.f.read(n)
        if len(b) != n:
            raise GGUFError(f"{self.path}: truncated GGUF header")
        return b

    def scalar(self, t: int) -> Any:
        fmt = _SCALARS[t]
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        n = self.scalar(10)
        if n > self.size:
            raise GGUFError(f"{self.path}: corrupt GGUF string length")
        return self.read(n).decode("utf-8", errors="replace")

    def value(self, t: int, keep_arrays: bool) -> Any:
        if t in _SCALARS:
            return self.scalar(t)
        if t == 8:
            return self.string()
        if t == 9:
            et = self.scalar(4)
            n = self.scalar(10)
            if n > self.size:
                raise GGUFError(f"{self.path}: corrupt GGUF array length")
            if et in _SCALARS:
                fmt = _SCALARS[et]
                sz = struct.calcsize(fmt)
                raw = self.read(sz * n)
                if not keep_arrays:
                    return n
                return list(struct.unpack(f"<{n}{fmt[1]}", raw))
            if et == 8 and not keep_arrays:  # skip strings without decoding them
                for _ in range(n):
                    ln = struct.unpack("<Q", self.read(8))[0]
                    self.f.seek(ln, 1)
                return n
            vals = [self.value(et, keep_arrays) for _ in range(n)]
            return vals if keep_arrays else n
        raise GGUFError(f"{self.path}: unknown GGUF value type {t}")


ARRAYS_KEPT = {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type"}


def read_gguf(path: str | Path) -> GGUFInfo:
    """Parse and validate a GGUF file's header; raise GGUFError with a one-line reason.

    Parsed headers are cached by (path, size, mtime): the factory, the fit check and the
    engine all look at the same file while loading, and a 150k-token vocabulary takes
    about half a second to parse.
    """
    p = Path(path)
    if not p.exists():
        raise GGUFError(f"model file not found: {p}")
    if not p.is_file():
        raise GGUFError(f"not a file: {p}")
    st = p.stat()
    return _read_cached(str(p.resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _read_cached(path: str, size: int, _mtime_ns: int) -> GGUFInfo:
    p = Path(path)
    with open(p, "rb") as f:
        r = _Reader(f, str(p), size)
        magic = f.read(4)
        if magic != GGUF_MAGIC:
            raise GGUFError(f"{p} is not a GGUF file (magic {magic!r})")
        version = r.scalar(4)
        if version not in (2, 3):
            raise GGUFError(f"{p}: unsupported GGUF version {version}")
        n_tensors = r.scalar(10)
        n_kv = r.scalar(10)
        if n_tensors > 10_000_000 or n_kv > 10_000_000:
            raise GGUFError(f"{p}: corrupt GGUF header")
        meta: dict[str, Any] = {}
        tokens: tuple[str, ...] = ()
        token_types: tuple[int, ...] = ()
        for _ in range(n_kv):
            key = r.string()
            t = r.scalar(4)
            val = r.value(t, keep_arrays=key in ARRAYS_KEPT)
            if key == "tokenizer.ggml.tokens" and isinstance(val, list):
                tokens = tuple(val)
                meta[key] = len(tokens)
            elif key == "tokenizer.ggml.token_type" and isinstance(val, list):
                token_types = tuple(val)
                meta[key] = len(token_types)
            else:
                meta[key] = val
        tensors = []
        for _ in range(n_tensors):
            name = r.string()
            nd = r.scalar(4)
            if nd > 8:
                raise GGUFError(f"{p}: corrupt tensor info for {name}")
            shape = tuple(r.scalar(10) for _ in range(nd))
            tt = r.scalar(4)
            off = r.scalar(10)
            tensors.append(TensorInfo(name, shape, tt, off))
        align = int(meta.get("general.alignment", 32) or 32)
        pos = f.tell()
        data_offset = (pos + align - 1) // align * align
    info = GGUFInfo(str(p), version, meta, tuple(tensors), data_offset, size, tokens, token_types)
    end = max((t.offset + t.n_bytes for t in info.tensors), default=0)
    if data_offset + end > size:
        raise GGUFError(
            f"{p} is truncated: {size} bytes on disk, tensors need {data_offset + end} "
            f"({(data_offset + end - size) / 1e6:.1f} MB missing)"
        )
    return info


def vocab_mismatch(target: GGUFInfo, draft: GGUFInfo) -> str | None:
    """Why ``draft`` cannot draft for ``target`` (None when the vocabularies match).

    Same rule as llama.cpp's speculative example: same tokenizer model, vocab sizes
    within 128 of each other, identical token texts over the shared range.
    """
    tm = target.metadata.get("tokenizer.ggml.model")
    dm = draft.metadata.get("tokenizer.ggml.model")
    if tm != dm:
        return f"tokenizer types differ ({tm} vs {dm})"
    if abs(target.n_vocab - draft.n_vocab) > 128:
        return f"vocabulary sizes differ ({target.n_vocab} vs {draft.n_vocab})"
    n = min(target.n_vocab, draft.n_vocab)
    for i in range(n):
        if target.tokens[i] != draft.tokens[i]:
            return f"token {i} differs ({target.tokens[i]!r} vs {draft.tokens[i]!r})"
    return None
