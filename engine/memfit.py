"""Will the model fit? Weights + KV cache + compute buffers against free memory, before loading.

``check_fit(cfg)`` (run by LocalEngine before every load) reads the GGUF header (layers, KV heads, head dims, tensor sizes), works
out what llama.cpp will place on the GPU and in system memory for the requested context,
KV type and offload, and compares that with free device memory (``nvidia-smi`` /
``rocm-smi`` when the llama.cpp build offloads) and ``MemAvailable`` from /proc/meminfo.
When it does not fit it raises :class:`FitError` with a one-line message that names the
numbers and a way out (a shorter context, a smaller KV type, fewer offloaded layers)
instead of letting llama.cpp die of out-of-memory halfway through the load.

Estimates follow llama.cpp's placement: the token embedding stays in host memory, the
last ``gpu_layers`` blocks go to the device (the output layer too when all are
offloaded), each offloaded layer's KV cache sits beside it; the draft model's KV cache is
always f16. Compute buffers are an estimate (logits and activations of one ubatch, plus
the attention score matrix when flash attention is off).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from engine.config import EngineConfig, resolve_flash_attn
from engine.devices import DeviceMemory, GiB, MiB, gpu_devices, host_memory
from engine.gguf_info import GGUFInfo, read_gguf

# bytes per KV element
KV_BYTES: dict[str, float] = {"f32": 4.0, "f16": 2.0, "bf16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32}
DEVICE_RESERVE = 512 * MiB  # CUDA/HIP context, cuBLAS workspace and friends
HOST_RESERVE = 256 * MiB
HEADROOM = 0.03  # warn (not fail) when less than this share of free memory would be left


class FitError(RuntimeError):
    """The model does not fit; ``str(e)`` is one line with the numbers and a suggestion."""

    def __init__(self, message: str, report: FitReport | None = None) -> None:
        super().__init__(message)
        self.report = report



@dataclass(frozen=True)
class ModelNeeds:
    """What one model needs, split between device and host."""

    weights_device: int = 0
    weights_host: int = 0
    kv_device: int = 0
    kv_host: int = 0
    kv_per_token: int = 0  # all layers, at the requested KV type
    compute_device: int = 0
    compute_host: int = 0
    n_ctx: int = 0
    layers: int = 0
    offloaded: int = 0


@dataclass(frozen=True)
class FitReport:
    fits: bool
    gpu: bool
    device: DeviceMemory | None
    n_ctx: int
    kv_type: str
    target: ModelNeeds
    draft: ModelNeeds | None
    host_available: int
    need_device: int
    need_host: int
    message: str = ""
    suggestion: str = ""
    warnings: tuple[str, ...] = field(default=())

    def host_room_for(self, extra: int) -> bool:
        """Whether ``extra`` more bytes of system memory still leave the headroom (True when the
        free memory is unknown): what an optional buffer such as the side prefill's cache asks."""
        return not self.host_available or self.need_host + extra <= self.host_available * (1 - HEADROOM)

    @property
    def side_prefill_bytes(self) -> int:
        """A second context on the target (its KV cache and compute buffers; the weights are mmapped)."""
        return self.target.kv_host + self.target.compute_host

    def to_dict(self) -> dict:
        def gib(n: int) -> float:
            return round(n / GiB, 3)

        return {
            "fits": self.fits,
            "gpu": self.gpu,
            "device": None
            if self.device is None
            else {
                "kind": self.device.kind,
                "name": self.device.name,
                "count": self.device.count,
                "total_gib": gib(self.device.total),
                "free_gib": gib(self.device.free),
            },
            "n_ctx": self.n_ctx,
            "kv_type": self.kv_type,
            "need_device_gib": gib(self.need_device),
            "need_host_gib": gib(self.need_host),
            "host_available_gib": gib(self.host_available),
            # CPU: the second context on the other weight layout (side prefill, wide verify passes),
            # loaded only when it also leaves the headroom
            "side_context_gib": None if self.gpu else gib(self.side_prefill_bytes),
            "side_context_room": None if self.gpu else self.host_room_for(self.side_prefill_bytes),
            "target": {
                k: (gib(v) if k not in ("n_ctx", "layers", "offloaded", "kv_per_token") else v)
                for k, v in self.target.__dict__.items()
            },
            "draft": None
            if self.draft is None
            else {
                k: (gib(v) if k not in ("n_ctx", "layers", "offloaded", "kv_per_token") else v)
                for k, v in self.draft.__dict__.items()
            },
            "message": self.message,
            "suggestion": self.suggestion,
            "warnings": list(self.warnings),
        }



def _per_layer(value: object, n_layer: int) -> list[int]:
    if isinstance(value, list):
        vals = [int(v) for v in value][:n_layer]
        return vals + [vals[-1] if vals else 0] * (n_layer - len(vals))
    return [int(value or 0)] * n_layer  # type: ignore[call-overload]


def kv_bytes_per_token(info: GGUFInfo, kv_type: str) -> list[int]:
    """KV cache bytes per token, one entry per layer."""
    if kv_type not in KV_BYTES:
        raise ValueError(f"unknown KV cache type {kv_type!r}")
    n_layer = int(info.meta("block_count", 0) or 0)
    n_embd = int(info.meta("embedding_length", 0) or 0)
    heads = _per_layer(info.meta("attention.head_count", 0), n_layer)
    kv_heads = _per_layer(
        info.meta("attention.head_count_kv", None) or info.meta("attention.head_count", 0), n_layer
    )
    h0 = max(heads) if heads else 0
    dk = int(info.meta("attention.key_length", 0) or (n_embd // h0 if h0 else 0))
    dv = int(info.meta("attention.value_length", 0) or dk)
    b = KV_BYTES[kv_type]
    return [int(kvh * (dk + dv) * b) for kvh in kv_heads]


def _layer_of(name: str) -> int | None:
    if name.startswith("blk."):
        try:
            return int(name.split(".")[1])
        except ValueError:
            return None
    return None


def model_needs(
    info: GGUFInfo,
    *,
    n_ctx: int,
    kv_type: str,
    gpu: bool,
    gpu_layers: int,
    n_batch: int,
    flash_attn: bool | None,
) -> ModelNeeds:
    n_layer = int(info.meta("block_count", 0) or 0)
    train = int(info.meta("context_length", 0) or 0)
    n_ctx = min(n_ctx, train) if train > 0 else n_ctx
    if not gpu or gpu_layers == 0:
        offloaded, out_on_gpu = 0, False
    elif gpu_layers < 0 or gpu_layers > n_layer:
        offloaded, out_on_gpu = n_layer, True
    else:
        offloaded, out_on_gpu = gpu_layers, False
    first_gpu = n_layer - offloaded
    w_dev = w_host = 0
    for t in info.tensors:
        if ".nextn." in t.name or ".mtp." in t.name:
            layer_on_gpu = out_on_gpu
        else:
            li = _layer_of(t.name)
            if li is not None:
                layer_on_gpu = li >= first_gpu and offloaded > 0
            elif t.name.startswith("token_embd."):
                layer_on_gpu = False  # llama.cpp keeps the input embedding in host memory
            else:
                layer_on_gpu = out_on_gpu
        if layer_on_gpu:
            w_dev += t.n_bytes
        else:
            w_host += t.n_bytes
    per_layer = kv_bytes_per_token(info, kv_type)
    kv_dev = sum(per_layer[first_gpu:]) * n_ctx if offloaded else 0
    kv_host = sum(per_layer[:first_gpu]) * n_ctx
    n_vocab = info.n_vocab or 32000
    n_embd = int(info.meta("embedding_length", 0) or 0)
    n_ff = max(_per_layer(info.meta("feed_forward_length", 0), max(n_layer, 1)) or [0])
    n_head = max(_per_layer(info.meta("attention.head_count", 0), max(n_layer, 1)) or [0])
    ub = max(1, n_batch)
    act = ub * (n_vocab * 4 + n_ff * 8 + n_embd * 32)
    fa = flash_attn if flash_attn is not None else True  # llama.cpp auto: on wherever the backend supports it
    if not fa:
        act += ub * n_ctx * n_head * 4  # the KQ score matrix of one layer
    logits_host = n_vocab * 4 * ub  # the output buffer is host memory
    return ModelNeeds(
        weights_device=w_dev,
        weights_host=w_host,
        kv_device=kv_dev,
        kv_host=kv_host,
        kv_per_token=sum(per_layer),
        compute_device=act if offloaded else 0,
        compute_host=logits_host + (0 if offloaded else act),
        n_ctx=n_ctx,
        layers=n_layer,
        offloaded=offloaded,
    )


def _gib(n: float) -> str:
    return f"{n / GiB:.1f} GiB"


def _detect_gpu(cfg: EngineConfig) -> bool:
    if cfg.gpu_layers == 0:
        return False
    try:
        from engine import backend
    except Exception:  # pragma: no cover - no llama_cpp at all
        return False
    return backend.gpu_offload_supported()


def estimate(
    cfg: EngineConfig,
    *,
    gpu: bool,
    device: DeviceMemory | None,
    host_available: int,
    read: Callable[[str], GGUFInfo] | None = None,
) -> FitReport:
    """The fit report for ``cfg`` on the given memory (pure; ``check_fit`` probes the machine)."""
    read = read or read_gguf
    info = read(cfg.model_path)
    kw = {"gpu": gpu, "gpu_layers": cfg.gpu_layers, "n_batch": cfg.n_batch}
    fa = resolve_flash_attn(cfg.flash_attn, gpu=gpu, kv_type=cfg.kv_type)
    tgt = model_needs(info, n_ctx=cfg.n_ctx, kv_type=cfg.kv_type, flash_attn=fa, **kw)  # type: ignore[arg-type]
    drf = None
    if cfg.draft_model_path:
        dinfo = read(cfg.draft_model_path)
        dfa = resolve_flash_attn(cfg.flash_attn, gpu=gpu, kv_type="f16")
        drf = model_needs(dinfo, n_ctx=tgt.n_ctx, kv_type="f16", flash_attn=dfa, **kw)  # type: ignore[arg-type]
    parts = [tgt] + ([drf] if drf else [])
    need_dev = sum(p.weights_device + p.kv_device + p.compute_device for p in parts)
    need_host = sum(p.weights_host + p.kv_host + p.compute_host for p in parts)
    on_device = gpu and need_dev > 0
    if on_device:
        need_dev += DEVICE_RESERVE
    need_host += HOST_RESERVE
    warnings: list[str] = []
    problems: list[str] = []
    if on_device and device is not None:
        if need_dev > device.free:
            problems.append("device")
        elif need_dev > device.free * (1 - HEADROOM):
            warnings.append(f"{_gib(device.free - need_dev)} of device memory would be left")
    elif on_device:
        warnings.append("free device memory unknown (no nvidia-smi / rocm-smi): not checked")
    if host_available:
        if need_host > host_available:
            problems.append("host")
        elif need_host > host_available * (1 - HEADROOM):
            warnings.append(f"{_gib(host_available - need_host)} of system memory would be left")
    rep = FitReport(
        fits=not problems,
        gpu=on_device,
        device=device,
        n_ctx=tgt.n_ctx,
        kv_type=cfg.kv_type,
        target=tgt,
        draft=drf,
        host_available=host_available,
        need_device=need_dev if on_device else 0,
        need_host=need_host,
        warnings=tuple(warnings),
    )
    if not problems:
        return rep
    where = "device" if "device" in problems else "host"
    if where == "device" and device is not None:
        free, need = device.free, need_dev
        w = tgt.weights_device + (drf.weights_device if drf else 0)
        kv = tgt.kv_device + (drf.kv_device if drf else 0)
        comp = need - w - kv
        place = f"on {device.name}"
    else:
        free, need = host_available, need_host
        w = tgt.weights_host + (drf.weights_host if drf else 0)
        kv = tgt.kv_host + (drf.kv_host if drf else 0)
        comp = need - w - kv
        place = "in system memory"
    msg = (
        f"{Path(cfg.model_path).name} needs {_gib(need)} {place} (weights {_gib(w)} + KV cache {cfg.kv_type} "
        f"at {tgt.n_ctx} tokens {_gib(kv)} + compute {_gib(comp)}) but {_gib(free)} is free"
    )
    sugg = suggest(cfg, rep, where=where, free=free, need=need, kv=kv)
    return replace(rep, message=msg + (f"; {sugg}" if sugg else ""), suggestion=sugg)


def suggest(cfg: EngineConfig, rep: FitReport, *, where: str, free: int, need: int, kv: int) -> str:
    """A way out: a context that fits, a smaller KV type, or fewer offloaded layers."""
    tips: list[str] = []
    fixed = need - kv
    tgt = rep.target
    drf = rep.draft
    on_dev = where == "device"
    frac_dev = tgt.offloaded / tgt.layers if tgt.layers else 0.0
    share = frac_dev if on_dev else 1 - frac_dev
    per_tok = tgt.kv_per_token * share
    if drf is not None:
        per_tok += drf.kv_per_token * share  # f16 either way
    room = free - fixed
    if per_tok > 0 and room > 0:
        ctx = int(room // per_tok) // 1024 * 1024
        if ctx >= 2048:
            tips.append(f"try --ctx {min(ctx, rep.n_ctx - 1024) if ctx >= rep.n_ctx else ctx}")
    for kvt in ("q8_0", "q4_0"):
        if KV_BYTES[kvt] >= KV_BYTES.get(cfg.kv_type, 2.0):
            continue
        new_kv = tgt.kv_per_token * share * KV_BYTES[kvt] / KV_BYTES[cfg.kv_type] * rep.n_ctx
        new_kv += (drf.kv_per_token * share * rep.n_ctx) if drf is not None else 0
        if fixed + new_kv <= free:
            tips.append(f"or --kv-type {kvt} (KV cache {_gib(new_kv)})")
            break
    if on_dev and not tips and tgt.layers:
        per_layer = (need - DEVICE_RESERVE - tgt.compute_device) / max(
            1, tgt.offloaded + (drf.offloaded if drf else 0)
        )
        n = int((free - DEVICE_RESERVE - tgt.compute_device) // per_layer) if per_layer > 0 else 0
        if n > 0:
            tips.append(f"try --gpu-layers {min(n, tgt.layers - 1)} (the rest runs on the CPU, slower)")
        else:
            tips.append("a smaller quantization or model is needed")
    elif not tips:
        tips.append("a smaller quantization or model is needed")
    return " ".join(tips)


def check_fit(
    cfg: EngineConfig,
    *,
    gpu: bool | None = None,
    device: DeviceMemory | None = None,
    host_available: int | None = None,
    raise_error: bool = True,
) -> FitReport:
    """Probe free memory and check that ``cfg`` fits; raise :class:`FitError` when it does not
    (unless ``TAU_SKIP_FIT_CHECK=1`` is set: then the report says so and loading goes ahead)."""
    if gpu is None:
        gpu = _detect_gpu(cfg)
    if gpu and device is None:
        device = gpu_devices()
    if host_available is None:
        host_available = host_memory()[1]
    rep = estimate(cfg, gpu=gpu, device=device, host_available=host_available)
    if os.environ.get("TAU_SKIP_FIT_CHECK", "") not in ("", "0"):
        raise_error = False  # the user knows better (e.g. memory another process is about to free)
    if not rep.fits and raise_error:
        raise FitError(rep.message, rep)
    return rep
