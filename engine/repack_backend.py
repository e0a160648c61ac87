"""Repacked CPU weights without AMX: llama.cpp's x86 repacked layout (``CPU_REPACK``) chosen by
tensor overrides, so a machine whose AMX kernels crash (SIGILL on the first batched pass inside
some VMs) still gets the faster verify passes of repacked Q4 weights.

llama.cpp's own switch (``use_extra_bufts``) takes every extra buffer type or none, AMX first.
With it off, ``tensor_buft_overrides`` can still place chosen tensors in the repack buffer type;
only the matrix weights whose type that layout packs on x86 go there (another type in it would
have no packing and crash), the rest stay plain.
"""

from __future__ import annotations

import ctypes
import functools
import re

import llama_cpp.llama_cpp as _ll

from engine import backend

REPACK_BUFT = "CPU_REPACK"
AMX_BUFT = "AMX"
# the types CPU_REPACK packs on x86 (Q4_0, Q4_K and IQ4_NL with AVX2; rows a multiple of 8)
REPACK_TYPES = frozenset({"Q4_0", "Q4_K", "IQ4_NL"})
_DEV_TYPE_CPU = 0


class _Override(ctypes.Structure):
    _fields_ = [("pattern", ctypes.c_char_p), ("buft", ctypes.c_void_p)]


@functools.cache
def extra_buffer_types() -> dict[str, int]:
    """The CPU backend's extra buffer types by name (e.g. AMX, CPU_REPACK) and their handles."""
    lib = _ll._lib
    lib.ggml_backend_dev_by_type.restype = ctypes.c_void_p
    lib.ggml_backend_dev_by_type.argtypes = [ctypes.c_int]
    lib.ggml_backend_dev_backend_reg.restype = ctypes.c_void_p
    lib.ggml_backend_dev_backend_reg.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_reg_get_proc_address.restype = ctypes.c_void_p
    lib.ggml_backend_reg_get_proc_address.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.ggml_backend_buft_name.restype = ctypes.c_char_p
    lib.ggml_backend_buft_name.argtypes = [ctypes.c_void_p]
    backend.init()
    dev = lib.ggml_backend_dev_by_type(_DEV_TYPE_CPU)
    if not dev:
        return {}
    fn = lib.ggml_backend_reg_get_proc_address(lib.ggml_backend_dev_backend_reg(dev), b"ggml_backend_dev_get_extra_bufts")
    if not fn:
        return {}
    arr = ctypes.CFUNCTYPE(ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)(fn)(dev)
    out: dict[str, int] = {}
    i = 0
    while arr and arr[i]:
        out[lib.ggml_backend_buft_name(arr[i]).decode()] = int(arr[i])
        i += 1
    return out


def amx_present() -> bool:
    """llama.cpp would put repacked weights in AMX buffers here (its kernels are compiled in and the
    CPU offers AMX), so repacking without AMX is a layout of its own."""
    return AMX_BUFT in extra_buffer_types()


def repack_tensors(gguf_path: str) -> list[str]:
    """The matrix weights of a GGUF that the repacked layout takes on this CPU."""
    from engine.gguf_info import read_gguf

    out = []
    for t in read_gguf(gguf_path).tensors:
        if (t.name.startswith("blk.") and t.name.endswith(".weight") and len(t.shape) == 2
                and t.type_name in REPACK_TYPES and t.shape[1] % 8 == 0):
            out.append(t.name)
    return out


def overrides_without_amx(gguf_path: str) -> ctypes.Array | None:
    """A NULL-terminated ``tensor_buft_overrides`` array placing the repackable weights in
    CPU_REPACK (keep it alive until the load returns), or None when there is nothing to place."""
    buft = extra_buffer_types().get(REPACK_BUFT)
    names = repack_tensors(gguf_path)
    if not buft or not names:
        return None
    pattern = "^(" + "|".join(re.escape(n) for n in names) + ")$"  # one regex: the loader tries each per tensor
    return (_Override * 2)(_Override(pattern.encode(), buft), _Override(None, None))
