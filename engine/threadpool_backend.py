"""A persistent ggml CPU threadpool for a llama.cpp context, as llama-server attaches one.

Without one, every ``llama_decode`` on the CPU backend makes a disposable threadpool: it starts
its worker threads, runs the graph and joins them again. llama-server (``common_init_from_params``)
and llama-bench attach a pool made once, whose workers wait for the next graph by polling for a
while before they sleep (``poll`` 50 is their default). llama-cpp-python binds none of this, so the
three functions are taken from the libraries it loaded.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import llama_cpp

MAX_THREADS = 512  # GGML_MAX_N_THREADS: the length of the params' cpumask


class _Params(ctypes.Structure):
    _fields_ = [
        ("cpumask", ctypes.c_bool * MAX_THREADS),
        ("n_threads", ctypes.c_int),
        ("prio", ctypes.c_int),
        ("poll", ctypes.c_uint32),
        ("strict_cpu", ctypes.c_bool),
        ("paused", ctypes.c_bool),
    ]


class _Api:
    def __init__(self) -> None:
        lib = llama_cpp.llama_cpp._lib  # libllama, wherever LLAMA_CPP_LIB_PATH or the package put it
        folder = Path(lib._name).parent
        base = _load(folder, "ggml-base")
        cpu = _load(folder, "ggml-cpu")
        self.params_init = base.ggml_threadpool_params_init
        self.params_init.argtypes = [ctypes.POINTER(_Params), ctypes.c_int]
        self.params_init.restype = None
        self.new = cpu.ggml_threadpool_new
        self.new.argtypes = [ctypes.POINTER(_Params)]
        self.new.restype = ctypes.c_void_p
        self.free = cpu.ggml_threadpool_free
        self.free.argtypes = [ctypes.c_void_p]
        self.free.restype = None
        self.attach = lib.llama_attach_threadpool
        self.attach.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self.attach.restype = None
        self.detach = lib.llama_detach_threadpool
        self.detach.argtypes = [ctypes.c_void_p]
        self.detach.restype = None


def _load(folder: Path, name: str) -> ctypes.CDLL:
    for f in (f"lib{name}.so", f"lib{name}.dylib", f"{name}.dll"):
        if (folder / f).exists():
            return ctypes.CDLL(str(folder / f))
    raise OSError(f"no {name} library beside libllama in {folder}")


@functools.cache
def api() -> _Api | None:
    """The bound functions, once; None when this build lacks them."""
    try:
        return _Api()
    except (OSError, AttributeError):
        return None


class Threadpool:
    """One pool of ``threads`` threads attached to one context (pools are not shared: a side
    context may decode beside the main one)."""

    def __init__(self, ctx_ptr: int | ctypes.c_void_p, threads: int, poll: int) -> None:
        a = api()
        if a is None:
            raise OSError("this llama.cpp build has no ggml threadpool functions")
        p = _Params()
        a.params_init(ctypes.byref(p), threads)
        p.poll = max(0, min(100, poll))
        pool = a.new(ctypes.byref(p))
        if not pool:
            raise OSError(f"ggml could not start a threadpool of {threads} threads")
        self._api, self._ctx, self._pool = a, ctx_ptr, pool
        a.attach(ctx_ptr, pool, None)

    def close(self) -> None:
        """Detach and free; the context then makes disposable pools again (call before freeing it)."""
        if self._pool:
            self._api.detach(self._ctx)
            self._api.free(self._pool)
            self._pool = None
