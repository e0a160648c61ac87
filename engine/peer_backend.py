"""The bench's in-process peer: llama-cpp-python's own prompt-lookup speculative decoding, on the
engine's model and load settings (a backend module: it imports llama_cpp)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import llama_cpp  # noqa: I001  (must come before numpy)

from engine.backend import _log_cb


@dataclass(frozen=True)
class PeerSettings:
    """What the peer runs on: the engine's own model and load settings."""

    model_path: str
    n_ctx: int
    n_batch: int
    threads: int
    gpu_layers: int
    extra_buffers: bool
    draft_model_path: str | None = None


_PEERS: dict[PeerSettings, object] = {}  # one Llama per settings: loading it again per prompt would dominate


def peer_prompt_lookup(peer: PeerSettings, prompt: str, max_tokens: int, temperature: float, top_p: float,
                       top_k: int = 0, min_p: float = 0.0, seed: int = 1234) -> tuple[int, float, float]:
    """Run llama-cpp-python's ``LlamaPromptLookupDecoding`` on the engine's model.

    Returns (completion tokens, decode seconds, wall seconds). ``logits_all=True`` because
    with the default it crashes once more than n_batch tokens are evaluated.
    """
    import time

    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    llm = _PEERS.get(peer)
    if llm is None:
        llm = _peer_llama(
            peer.extra_buffers,
            model_path=peer.model_path,
            n_ctx=peer.n_ctx,
            n_batch=peer.n_batch,
            n_threads=peer.threads,
            n_threads_batch=peer.threads,
            n_gpu_layers=peer.gpu_layers,
            draft_model=LlamaPromptLookupDecoding(num_pred_tokens=10),
            logits_all=True,
            verbose=False,
        )
        llama_cpp.llama_log_set(_log_cb, ctypes.c_void_p(0))  # Llama() installs its own logger
        _PEERS[peer] = llm
    assert isinstance(llm, llama_cpp.Llama)
    t0 = time.perf_counter()
    first = None
    pieces: list[str] = []
    for chunk in llm.create_completion(
        prompt, max_tokens=max_tokens, temperature=temperature, top_p=top_p, top_k=top_k, min_p=min_p,
        repeat_penalty=1.0, stream=True, seed=seed,
    ):
        if first is None:
            first = time.perf_counter()
        pieces.append(chunk["choices"][0]["text"])  # type: ignore[index]
    end = time.perf_counter()
    n = len(llm.tokenize("".join(pieces).encode("utf-8"), add_bos=False, special=True))
    return n, end - (first or end), end - t0


def close_peers() -> None:
    for llm in _PEERS.values():
        llm.close()  # type: ignore[attr-defined]
    _PEERS.clear()


def _peer_llama(extra_buffers: bool, **kw):
    """``llama_cpp.Llama(**kw)`` with the engine's choice of CPU extra buffers.

    Llama() takes no such argument and llama.cpp's default (on) crashes a native build on
    an AMX machine (see ``cpu_extra_buffers``), so its default parameters are wrapped for
    the duration of the constructor: the peer runs on the same weight layout as tau.
    """
    import llama_cpp.llama as high

    orig = high.llama_cpp.llama_model_default_params

    def params():
        p = orig()
        p.use_extra_bufts = extra_buffers
        return p

    high.llama_cpp.llama_model_default_params = params
    try:
        return llama_cpp.Llama(**kw)
    finally:
        high.llama_cpp.llama_model_default_params = orig
