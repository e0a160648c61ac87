"""MTP (NextN) heads on llama.cpp's low-level API: the head's own context, and a target
context that feeds it.

How llama.cpp drives an MTP head (vendored tree, common/speculative.cpp,
``common_speculative_impl_draft_mtp``), which this module follows:

* The head runs in a second context on the *same* ``llama_model`` (loaded with
  ``load_mtp``), created with ``ctx_type = LLAMA_CONTEXT_TYPE_MTP`` and
  ``ctx_other = target`` (speculative.cpp:2526-2535, 2557-2562). That context builds
  ``LLM_GRAPH_TYPE_DECODER_MTP`` graphs (llama-context.cpp:31) and its KV cache holds only
  the NextN layer(s) (llama-model.cpp:2799-2806: the layer filter ``il >= n_layer()``).
* The head at position p takes the token x_p and the target's final hidden state at p-1
  (``h_nextn``: after the output norm) and predicts x_{p+1}. The hidden state goes in as
  the token's embedding row: ``llama_batch_ext_add_token`` + ``llama_batch_ext_set_embd_token``
  (common.cpp:2156-2163; the MTP graph reads ``ubatch->embd`` into its ``h`` input,
  llama-graph.cpp:107-114). ``llama_batch_ext_set_embd_state`` is a stub that returns false
  in this version (llama-batch.cpp:1230-1236), so it is not used.
* The target exposes h for every token of a batch after
  ``llama_set_embeddings_nextn(ctx_tgt, true, masked=false)``; read with
  ``llama_get_embeddings_nextn`` (rows = the batch's tokens, llama-context.cpp:2015-2031,
  2145-2149). The head's own output state feeds the next draft step (speculative.cpp:1652).
  llama.cpp reads it with ``masked=true`` (speculative.cpp:1418), but the MTP graphs set
  ``t_h_nextn`` *before* selecting the output rows (glm4-moe.cpp:269-272,
  qwen35.cpp:631-633) while masked extraction copies the first n_outputs rows
  (llama-context.cpp:2019-2030): right only for one-token batches. The head here uses
  ``masked=false`` (every row, indexed by batch position), right for any batch.
* Every target batch is replayed into the head (the ``process()`` hook,
  speculative.cpp:1475-1582): same tokens and positions, h shifted right by one, the first
  token paired with the last h of the previous batch; accept() keeps the h of the last accepted
  row (1733-1746). Drafting then decodes (id_last, h)
  at id_last's position, then each drafted token with the head's own h (1584-1731).
  Rollback is ``llama_memory_seq_rm`` on the head's KV, like the target's.

These staging functions (``llama_set_embeddings_nextn``, ``llama_get_embeddings_nextn``,
``llama_get_embeddings_nextn_ith``) are C++-mangled exports of libllama.so; llama-cpp-python
0.3.36 binds them in ``llama_cpp.llama_cpp_ext``.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Sequence

import llama_cpp  # noqa: I001  (must come before numpy)
import numpy as np
from llama_cpp import llama_cpp_ext

from engine import backend


def nextn_layers(model: backend.Model) -> int:
    """How many MTP/NextN blocks the loaded model has (0: none, or loaded without them)."""
    return int(llama_cpp.llama_model_n_layer_nextn(model.ptr))


class MtpHead:
    """The MTP head's own context on the target's model (KV of the NextN layer only)."""

    def __init__(self, model: backend.Model, target_ptr, *, n_ctx: int, n_batch: int, threads: int) -> None:
        if nextn_layers(model) <= 0:
            raise backend.BackendError("this model has no MTP heads (or was loaded without load_mtp)")
        self.model = model
        p = backend.context_params(n_ctx, n_batch, threads)
        p.ctx_type = llama_cpp.LLAMA_CONTEXT_TYPE_MTP
        p.ctx_other = target_ptr
        self.ptr = llama_cpp.llama_init_from_model(model.ptr, p)
        if not self.ptr:
            raise backend.BackendError("llama.cpp could not create the MTP context (see the llama.cpp log)")
        llama_cpp_ext.llama_set_embeddings_nextn(self.ptr, True, False)  # see the module doc
        self.n_ctx = int(llama_cpp.llama_n_ctx(self.ptr))
        self.n_batch = n_batch
        self.n_embd = int(llama_cpp.llama_model_n_embd_out(model.ptr))
        self.n_vocab = model.n_vocab
        self.mem = llama_cpp.llama_get_memory(self.ptr)
        self.batch = llama_cpp.llama_batch_ext_init(self.ptr)
        self.n_kv = 0  # positions [0, n_kv) are in the head's KV cache

    def close(self) -> None:
        if self.ptr:
            llama_cpp.llama_batch_ext_free(self.batch)
            llama_cpp.llama_free(self.ptr)
            self.ptr = None

    def decode(
        self, tokens: Sequence[int], h: np.ndarray, pos0: int, *, output_last: bool
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Evaluate ``tokens`` at pos0.. with h rows ``h`` ([len(tokens), n_embd], row i is the
        target state at position pos0+i-1). Returns (logits, h_out) of the last token when
        ``output_last``, else None. ``len(tokens)`` must not exceed n_batch."""
        n = len(tokens)
        if n == 0 or n > self.n_batch:
            raise backend.BackendError(f"MTP batch of {n} tokens (n_batch {self.n_batch})")
        if pos0 + n > self.n_ctx:
            raise backend.BackendError(f"MTP context full: {pos0 + n} tokens exceed {self.n_ctx}")
        h = np.ascontiguousarray(h, dtype=np.float32)
        assert h.shape == (n, self.n_embd), h.shape
        b = self.batch
        llama_cpp.llama_batch_ext_clear(b)
        fptr = ctypes.POINTER(ctypes.c_float)
        pos = llama_cpp.llama_pos(0)
        for i, t in enumerate(tokens):
            idx = llama_cpp.llama_batch_ext_add_token(b, 0, int(t))
            if idx != i:
                raise backend.BackendError(f"llama_batch_ext_add_token failed ({idx})")
            pos.value = pos0 + i
            llama_cpp.llama_batch_ext_set_pos(b, idx, ctypes.byref(pos))
            row = h[i]
            embd = llama_cpp.llama_embd(row.ctypes.data_as(fptr), 1, self.n_embd)
            if not llama_cpp.llama_batch_ext_set_embd_token(b, idx, embd):  # copies the row
                raise backend.BackendError("llama_batch_ext_set_embd_token refused the hidden state")
        if output_last:
            llama_cpp.llama_batch_ext_set_output_logits(b, n - 1, True)
        rc = llama_cpp.llama_process(self.ptr, llama_cpp.LLAMA_PROCESS_TYPE_DECODE, b)
        if rc != 0:
            raise backend.BackendError(f"llama_process (MTP) failed (code {rc})")
        self.n_kv = pos0 + n
        if not output_last:
            return None
        lp = llama_cpp.llama_get_logits_ith(self.ptr, n - 1)
        hp = llama_cpp_ext.llama_get_embeddings_nextn_ith(self.ptr, n - 1)
        if not lp or not hp:
            raise backend.BackendError("the MTP context returned no output row")
        logits = np.ctypeslib.as_array(lp, shape=(self.n_vocab,)).copy()
        h_out = np.ctypeslib.as_array(hp, shape=(self.n_embd,)).copy()
        return logits, h_out

    def truncate(self, pos: int) -> None:
        if pos < self.n_kv:
            if not llama_cpp.llama_memory_seq_rm(self.mem, 0, pos, -1):
                raise backend.BackendError(f"could not roll the MTP KV cache back to {pos}")
            self.n_kv = pos

    def token_cost(self, n: int = 6) -> float:
        """Seconds per draft step (one token with logits), measured past the KV it holds
        and rolled back afterwards: a starting cost for the drafter slot."""
        base = self.n_kv
        if base + n + 1 > self.n_ctx:
            return 0.0
        h = np.zeros((1, self.n_embd), dtype=np.float32)
        tok = min(3, self.n_vocab - 1)
        try:
            self.decode([tok], h, base, output_last=True)  # warm-up
            t0 = time.perf_counter()
            for i in range(n):
                self.decode([tok], h, base + 1 + i, output_last=True)
            return (time.perf_counter() - t0) / n
        finally:
            self.truncate(base)


class MtpTargetContext(backend.Context):
    """A target context that outputs its hidden state (h_nextn) for every token and replays
    each decoded batch into an :class:`MtpHead`, so the head's KV is always in step with
    the target's (llama.cpp's speculative ``process()`` hook).

    It also tracks the tokens in its KV cache (``tokens``) and keeps the h rows of the last
    batch, enough to resume after a rollback into that batch (what the decode loop does).
    A rollback further back loses h at the cut; the head then pairs the next token with a
    zero state (as at position 0): drafts there may be worse, output is unaffected.
    """

    def __init__(self, model: backend.Model, **kw) -> None:
        super().__init__(model, **kw)
        try:
            self.head = MtpHead(model, self.ptr, n_ctx=self.n_ctx, n_batch=self.n_batch, threads=self.threads)
        except backend.BackendError:
            super().close()
            raise
        llama_cpp_ext.llama_set_embeddings_nextn(self.ptr, True, False)
        self.n_embd = self.head.n_embd
        self.tokens: list[int] = []
        self._h = np.zeros((0, self.n_embd), dtype=np.float32)  # h rows of the last batch
        self._h_pos0 = 0
        self.h_gaps = 0  # catch-ups that had to start from a zero state

    def close(self) -> None:
        if getattr(self, "head", None) is not None:
            self.head.close()
        super().close()

    def set_threads(self, threads: int) -> None:
        super().set_threads(threads)
        llama_cpp.llama_set_n_threads(self.head.ptr, threads, threads)

    def h_at(self, pos: int) -> np.ndarray | None:
        """The target's hidden state at ``pos`` if still held (last batch only)."""
        if pos < 0:
            return np.zeros(self.n_embd, dtype=np.float32)
        i = pos - self._h_pos0
        if 0 <= i < len(self._h) and pos < len(self.tokens):
            return self._h[i]
        return None

    def decode(self, tokens: Sequence[int], pos0: int, *, all_logits: bool) -> np.ndarray | None:
        n = len(tokens)
        if n == 0:
            return None
        if pos0 < len(self.tokens):
            del self.tokens[pos0:]
        out: list[np.ndarray] = []
        for start in range(0, n, self.n_batch):
            chunk = list(tokens[start : start + self.n_batch])
            last = start + len(chunk) == n
            rows = super().decode(chunk, pos0 + start, all_logits=all_logits)  # one llama_decode
            if rows is not None and (all_logits or last):
                out.append(rows)
            self._feed(chunk, pos0 + start)
        return out[0] if len(out) == 1 else np.concatenate(out)

    def _feed(self, chunk: list[int], pos0: int) -> None:
        m = len(chunk)
        hp = llama_cpp_ext.llama_get_embeddings_nextn(self.ptr)
        if not hp:
            raise backend.BackendError("the target returned no hidden states (h_nextn)")
        h = np.ctypeslib.as_array(hp, shape=(m, self.n_embd)).copy()
        prev = self.h_at(pos0 - 1)
        if prev is None:
            self.h_gaps += 1
            prev = np.zeros(self.n_embd, dtype=np.float32)
        shifted = np.concatenate([prev[None, :], h[:-1]])
        self.head.truncate(pos0)
        if self.head.n_kv < pos0:  # the head missed positions (cannot happen through decode())
            self.h_gaps += 1
        self.head.decode(chunk, shifted, pos0, output_last=False)
        self.tokens.extend(chunk)
        self._h = h
        self._h_pos0 = pos0

    def truncate(self, pos: int) -> None:
        super().truncate(pos)
        self.head.truncate(pos)
        del self.tokens[pos:]

    def clear(self) -> None:
        super().clear()
        self.head.truncate(0)
        self.tokens.clear()
