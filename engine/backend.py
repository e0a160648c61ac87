"""The one module that imports llama_cpp: models, contexts and batches on the low-level API.

llama_cpp is imported before numpy on purpose (importing numpy first crashed model loads
on a CUDA build). llama.cpp's log goes to a file through ``llama_log_set`` and never
reaches the terminal.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import llama_cpp  # noqa: I001  (must come before numpy)
import numpy as np

from engine import statebuf
from engine.config import TAU_LLAMA_ENV, layout_name
from engine.widths import rows_for

KV_TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 8, "bf16": 30}


class BackendError(RuntimeError):
    """llama.cpp refused something (load, context, decode); the message is one line."""


# ---- process-wide set-up -------------------------------------------------------------

_init_lock = threading.Lock()
_initialised = False
_log_file: list = [None]


@llama_cpp.llama_log_callback
def _log_cb(level: int, text: bytes, _user: ctypes.c_void_p) -> None:
    f = _log_file[0]
    if f is not None:
        try:
            f.write(text.decode("utf-8", errors="replace"))
            f.flush()
        except (OSError, ValueError):
            pass


def init(log_path: str = "") -> None:
    """Initialise llama.cpp once; route its log to ``log_path`` (or discard it)."""
    global _initialised
    with _init_lock:
        if log_path:
            Path(log_path).parent.mkdir(parents=True, exist_ok=True)
            old = _log_file[0]
            _log_file[0] = open(log_path, "a", encoding="utf-8")  # noqa: SIM115
            if old is not None:
                old.close()
        if not _initialised:
            for k, v in TAU_LLAMA_ENV.items():  # read by a patched build at its first CUDA graph; a user's value stays
                os.environ.setdefault(k, v)
            llama_cpp.llama_log_set(_log_cb, ctypes.c_void_p(0))
            llama_cpp.llama_backend_init()
            _initialised = True


def gpu_offload_supported() -> bool:
    return bool(llama_cpp.llama_supports_gpu_offload())


def cpu_extra_buffers(choice: bool | None, *, gpu: bool) -> bool:
    """Whether llama.cpp may move CPU weights into its extra buffer types (AMX, repacked
    layouts). ``None`` = off for CPU inference, llama.cpp's default (on) with a GPU.

    Off on CPU because of what they did on the 2-core Xeon (AMX) tau is developed on: a
    llama.cpp built there with -march=native compiles the AMX kernels, repacks the Q4_K
    weights for them, and the first batch of more than one row dies of SIGILL (``tilezero``
    in ggml_backend_amx_mul_mat) inside that VM; and a build without AMX, using the AVX2/512
    repacked Q4_K layout instead, prefilled at 67 tok/s and decoded one token in 101 ms
    against 119 tok/s and 91 ms with plain weights (Qwen2.5-Coder-1.5B Q4_K_M).
    """
    if choice is not None:
        return choice
    return gpu


def system_info() -> str:
    return llama_cpp.llama_print_system_info().decode("utf-8", errors="replace")


def build_id() -> str:
    """The llama.cpp build: llama-cpp-python's version and a hash of the compiled-in CPU/GPU features."""
    import hashlib

    feats = hashlib.sha1((system_info() + _cpu_kernels_stamp()).encode()).hexdigest()[:8]
    return f"llama{getattr(llama_cpp, '__version__', '0')}-{feats}"


def _cpu_kernels_stamp() -> str:
    """Size and time of the CPU kernels' library: a rebuild of the same version (say, with AMX's tile
    configuration fixed) is another build, so what was measured or ruled out on the old one goes."""
    lib = Path(os.environ.get("LLAMA_CPP_LIB_PATH") or Path(llama_cpp.__file__).parent / "lib")
    files = {f.resolve() for f in lib.glob("libggml-cpu*") if f.is_file()} if lib.is_dir() else set()
    return ";".join(f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in sorted(files))


# ---- models ----------------------------------------------------------------------------


class Model:
    """A loaded GGUF: weights plus its vocabulary."""

    def __init__(self, path: str, *, gpu_layers: int = -1, load_mtp: bool = False, extra_buffers: bool | None = None,
                 amx: bool = True) -> None:
        """``amx``: with extra buffers, whether llama.cpp may use its AMX type; False repacks the Q4
        weights without it (engine.repack_backend), where AMX is what crashes."""
        init()
        params = llama_cpp.llama_model_default_params()
        params.n_gpu_layers = gpu_layers if gpu_layers >= 0 else 999
        params.use_mmap = True
        self.gpu = gpu_offload_supported() and gpu_layers != 0  # some layers run on a GPU
        self.extra_buffers = cpu_extra_buffers(extra_buffers, gpu=self.gpu)
        self.amx = amx or not self.extra_buffers or self.gpu
        params.use_extra_bufts = self.extra_buffers
        overrides = None  # held until the load returns: llama.cpp reads the patterns during it
        if not self.amx:
            from engine import repack_backend

            overrides = repack_backend.overrides_without_amx(path)
            params.use_extra_bufts = False
            if overrides is not None:
                params.tensor_buft_overrides = ctypes.cast(overrides, ctypes.c_void_p)
        if load_mtp:
            params.load_mtp = True
        self.path = path
        self.ptr = llama_cpp.llama_model_load_from_file(path.encode(), params)
        if not self.ptr:
            raise BackendError(f"llama.cpp could not load {path} (see the llama.cpp log)")
        self.vocab = llama_cpp.llama_model_get_vocab(self.ptr)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.n_ctx_train = int(llama_cpp.llama_model_n_ctx_train(self.ptr))
        self.n_layer_nextn = int(llama_cpp.llama_model_n_layer_nextn(self.ptr))
        self.bos = int(llama_cpp.llama_vocab_bos(self.vocab))
        self.eos = int(llama_cpp.llama_vocab_eos(self.vocab))
        self.size_bytes = int(llama_cpp.llama_model_size(self.ptr))
        self._piece_cache: dict[int, bytes] = {}
        self._eog_cache: dict[int, bool] = {}

    @property
    def layout(self) -> str:
        """The CPU weight layout: plain, repacked (llama.cpp's extra buffer types) or repacked-noamx."""
        return layout_name(self.extra_buffers, self.amx)

    def close(self) -> None:
        if self.ptr:
            llama_cpp.llama_model_free(self.ptr)
            self.ptr = None

    def meta(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(1 << 16)
        n = llama_cpp.llama_model_meta_val_str(self.ptr, key.encode(), buf, len(buf))
        if n < 0:
            return None
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            llama_cpp.llama_model_meta_val_str(self.ptr, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", errors="replace")

    def chat_template(self) -> str | None:
        ptr = llama_cpp.llama_model_chat_template(self.ptr, None)
        return ptr.decode("utf-8", errors="replace") if ptr else None

    def tokenize(self, text: str, *, add_special: bool = False, parse_special: bool = True) -> list[int]:
        data = text.encode("utf-8")
        cap = len(data) + 16
        buf = (llama_cpp.llama_token * cap)()
        n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, cap, add_special, parse_special)
        if n < 0:
            cap = -n
            buf = (llama_cpp.llama_token * cap)()
            n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, cap, add_special, parse_special)
        return list(buf[:n])

    def piece(self, token: int) -> bytes:
        """The bytes of one token (special tokens rendered as their text)."""
        b = self._piece_cache.get(token)
        if b is None:
            buf = ctypes.create_string_buffer(64)
            n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, True)
            if n < 0:
                buf = ctypes.create_string_buffer(-n)
                n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, True)
            b = buf.raw[:n]
            self._piece_cache[token] = b
        return b

    def detokenize(self, tokens: Sequence[int]) -> str:
        return b"".join(self.piece(t) for t in tokens).decode("utf-8", errors="replace")

    def is_eog(self, token: int) -> bool:
        v = self._eog_cache.get(token)
        if v is None:
            v = bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))
            self._eog_cache[token] = v
        return v


# ---- contexts --------------------------------------------------------------------------


def context_params(n_ctx: int, n_batch: int, threads: int):
    """llama_context_params for one sequence with the given sizes and threads."""
    p = llama_cpp.llama_context_default_params()
    p.n_ctx = n_ctx
    p.n_batch = n_batch
    p.n_ubatch = n_batch
    p.n_seq_max = 1
    p.n_threads = threads
    p.n_threads_batch = threads
    p.no_perf = True
    return p


class Context:
    """One llama context (KV cache) on a model, with a reusable batch.

    Only the engine's owner thread may call ``decode``/``truncate``.
    """

    def __init__(
        self,
        model: Model,
        *,
        n_ctx: int,
        n_batch: int = 512,
        threads: int = 0,
        kv_type: str = "f16",
        flash_attn: bool | None = None,
        mtp: bool = False,
    ) -> None:
        if kv_type not in KV_TYPES:
            raise BackendError(f"unknown KV cache type {kv_type!r}")
        self.model = model
        threads = threads or (os.cpu_count() or 1)
        p = context_params(n_ctx, n_batch, threads)
        p.type_k = KV_TYPES[kv_type]
        p.type_v = KV_TYPES[kv_type]
        if flash_attn is not None:
            p.flash_attn_type = 1 if flash_attn else 0
        elif kv_type not in ("f16", "f32", "bf16"):
            p.flash_attn_type = 1  # a quantized V cache needs flash attention
        if mtp:
            p.ctx_type = llama_cpp.LLAMA_CONTEXT_TYPE_MTP
        self.ptr = llama_cpp.llama_init_from_model(model.ptr, p)
        if not self.ptr:
            raise BackendError(
                f"llama.cpp could not create a context of {n_ctx} tokens (KV {kv_type}); "
                "try a shorter context or a smaller KV type"
            )
        self.n_ctx = int(llama_cpp.llama_n_ctx(self.ptr))
        self.n_batch = n_batch
        self.threads = threads
        self.mem = llama_cpp.llama_get_memory(self.ptr)
        self.batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self.n_vocab = model.n_vocab
        self._state_buf: np.ndarray | None = None  # copy_seq_to's buffer
        # pad_table[n]: the rows an n-row verify pass evaluates (engine.widths); () = no padding
        self.pad_table: tuple[int, ...] = ()

    def close(self) -> None:
        if self.ptr:
            llama_cpp.llama_batch_free(self.batch)
            llama_cpp.llama_free(self.ptr)
            self.ptr = None

    def set_threads(self, threads: int) -> None:
        if threads < 1:  # llama.cpp reads 0 as GGML_DEFAULT_N_THREADS (4), oversubscribing small machines
            raise BackendError(f"thread count must be at least 1, not {threads}")
        llama_cpp.llama_set_n_threads(self.ptr, threads, threads)
        self.threads = threads

    def padded(self, n: int) -> int:
        """The rows a pass of ``n`` rows with logits on every row evaluates (``pad_table``)."""
        return rows_for(n, self.pad_table)

    def decode(self, tokens: Sequence[int], pos0: int, *, all_logits: bool) -> np.ndarray | None:
        """Evaluate ``tokens`` at positions pos0.. and return logits.

        all_logits: one row per token (verification) else only the last token's row.
        Long inputs are split into n_batch chunks. Returns [rows, n_vocab] float32: a view
        of llama.cpp's buffer (no copy: at 152k vocabulary a copy of 16 rows costs about a
        millisecond) that stays valid until the next decode on this context.
        """
        n = len(tokens)
        if n == 0:
            return None
        if pos0 + n > self.n_ctx:
            raise BackendError(f"context full: {pos0 + n} tokens exceed the context of {self.n_ctx}")
        w = self.padded(n) if all_logits else n
        if w > n and pos0 + w <= self.n_ctx and w <= self.n_batch:
            # causal attention: the rows before the padding are what an unpadded pass gives
            rows = self._decode([*tokens, *([tokens[-1]] * (w - n))], pos0, all_logits=True)
            self.truncate(pos0 + n)
            assert rows is not None
            return rows[:n]
        return self._decode(tokens, pos0, all_logits=all_logits)

    def submit(self, token: int, pos0: int) -> None:
        """Start a one-row step at ``pos0`` and return without its logits (``collect`` waits for
        them): on a GPU llama_decode only queues the graph, and the host can work meanwhile."""
        if pos0 + 1 > self.n_ctx:
            raise BackendError(f"context full: {pos0 + 1} tokens exceed the context of {self.n_ctx}")
        self._queue([token], pos0, all_logits=True)

    def collect(self) -> np.ndarray:
        """The submitted step's logits, [1, n_vocab] (a view, as ``decode``'s); waits for the device."""
        ptr = llama_cpp.llama_get_logits(self.ptr)  # synchronizes with the queued computation
        return np.ctypeslib.as_array(ptr, shape=(1, self.n_vocab))

    def _queue(self, chunk: Sequence[int], pos0: int, *, all_logits: bool, last: bool = True) -> None:
        """One llama_decode of at most n_batch tokens at pos0..: logits on every row, or only on the
        last row of the last chunk (on a GPU it returns once the graph is queued)."""
        b = self.batch
        m = len(chunk)
        for i, t in enumerate(chunk):
            b.token[i] = t
            b.pos[i] = pos0 + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = 1 if (all_logits or (last and i == m - 1)) else 0
        b.n_tokens = m
        rc = llama_cpp.llama_decode(self.ptr, b)
        if rc != 0:
            raise BackendError(f"llama_decode failed (code {rc})")

    def _decode(self, tokens: Sequence[int], pos0: int, *, all_logits: bool) -> np.ndarray | None:
        n = len(tokens)
        out: list[np.ndarray] = []
        for start in range(0, n, self.n_batch):
            chunk = tokens[start : start + self.n_batch]
            m = len(chunk)
            last_chunk = start + m == n
            self._queue(chunk, pos0 + start, all_logits=all_logits, last=last_chunk)
            rows = m if all_logits else (1 if last_chunk else 0)
            if rows:
                if out:  # an earlier chunk's view is about to be overwritten
                    out[-1] = out[-1].copy()
                ptr = llama_cpp.llama_get_logits(self.ptr)
                out.append(np.ctypeslib.as_array(ptr, shape=(rows, self.n_vocab)))
        return out[0] if len(out) == 1 else np.concatenate(out)

    def truncate(self, pos: int) -> None:
        """Drop the KV cache from position ``pos`` on (rollback)."""
        if not llama_cpp.llama_memory_seq_rm(self.mem, 0, pos, -1):
            raise BackendError(f"could not roll the KV cache back to {pos}")

    def clear(self) -> None:
        llama_cpp.llama_memory_clear(self.mem, True)

    def copy_seq_to(self, other: Context) -> bool:
        """Replace ``other``'s sequence 0 with this context's (KV cells and positions), through a
        buffer reserved once for both directions (engine.statebuf); both contexts need the same
        KV type and flash-attention layout."""
        n = int(llama_cpp.llama_state_seq_get_size(self.ptr, 0))
        buf = self._state_buf if self._state_buf is not None else other._state_buf
        if buf is None or buf.nbytes < n:
            tokens = int(llama_cpp.llama_memory_seq_pos_max(self.mem, 0)) + 1
            buf = statebuf.reserve(statebuf.context_bytes(n, tokens, max(self.n_ctx, other.n_ctx)))
        self._state_buf = other._state_buf = buf
        ptr = buf.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
        w = int(llama_cpp.llama_state_seq_get_data(self.ptr, ptr, n, 0))
        # the cells only: zeroing the whole cache's data cost 6 ms a copy, and its cells hold finite values already
        llama_cpp.llama_memory_clear(other.mem, False)
        if w == 0 or int(llama_cpp.llama_state_seq_set_data(other.ptr, ptr, w, 0)) == 0:
            other.clear()
            return False
        return True

    def save_state(self, path: Path, tokens: Sequence[int]) -> bool:
        """Write sequence 0's KV cache and its token list to ``path`` (atomically); False on failure."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        arr = (llama_cpp.llama_token * len(tokens))(*tokens)
        n = llama_cpp.llama_state_seq_save_file(self.ptr, str(tmp).encode(), 0, arr, len(tokens))
        if not n:
            tmp.unlink(missing_ok=True)
            return False
        os.replace(tmp, path)
        return True

    def load_state(self, path: Path) -> list[int] | None:
        """Replace sequence 0's KV cache with a saved one; its token list, or None (cache left empty)."""
        cap = self.n_ctx
        arr = (llama_cpp.llama_token * cap)()
        count = ctypes.c_size_t(0)
        self.clear()
        n = llama_cpp.llama_state_seq_load_file(self.ptr, str(path).encode(), 0, arr, cap, ctypes.byref(count))
        if not n:
            self.clear()
            return None
        return list(arr[: count.value])
