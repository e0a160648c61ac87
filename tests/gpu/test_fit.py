"""The fit check: weights + KV cache + compute against free device / system memory."""

from __future__ import annotations

import pytest

from engine import devices, memfit
from engine.config import EngineConfig
from engine.devices import DeviceMemory, GiB
from engine.lab.gpu.synthetic import synthetic_info
from engine.memfit import FitError, check_fit, estimate, kv_bytes_per_token

D27 = synthetic_info("dense-27b")
D15 = synthetic_info("dense-1.5b")


def _read(path: str):
    return {"d27.gguf": D27, "d15.gguf": D15}[path]


def rtx4090(free_gib: float = 23.2) -> DeviceMemory:
    return DeviceMemory("cuda", "NVIDIA GeForce RTX 4090", 24 * GiB, int(free_gib * GiB))


def test_kv_bytes_per_token_from_hparams() -> None:
    # 64 layers x 8 KV heads x (128 + 128) dims x 2 bytes
    assert sum(kv_bytes_per_token(D27, "f16")) == 64 * 8 * 256 * 2
    assert sum(kv_bytes_per_token(D27, "q8_0")) == pytest.approx(64 * 8 * 256 * 34 / 32, rel=1e-6)
    assert sum(kv_bytes_per_token(D27, "q4_0")) == pytest.approx(64 * 8 * 256 * 18 / 32, rel=1e-6)


def test_27b_at_32k_f16_does_not_fit_a_24gb_gpu_and_says_what_would() -> None:
    cfg = EngineConfig(model_path="d27.gguf", n_ctx=32768, kv_type="f16")
    rep = estimate(cfg, gpu=True, device=rtx4090(), host_available=32 * GiB, read=_read)
    assert not rep.fits
    assert "\n" not in rep.message
    assert "RTX 4090" in rep.message and "KV cache f16 at 32768 tokens 8.0 GiB" in rep.message
    assert "--kv-type q8_0" in rep.suggestion and "--ctx" in rep.suggestion
    ctx = int(rep.suggestion.split("--ctx ")[1].split()[0])
    ok = estimate(
        EngineConfig(model_path="d27.gguf", n_ctx=ctx),
        gpu=True,
        device=rtx4090(),
        host_available=32 * GiB,
        read=_read,
    )
    assert ok.fits  # the suggested context really fits
    q8 = estimate(
        EngineConfig(model_path="d27.gguf", n_ctx=32768, kv_type="q8_0"),
        gpu=True,
        device=rtx4090(),
        host_available=32 * GiB,
        read=_read,
    )
    assert q8.fits


def test_draft_model_kv_is_f16_and_counted() -> None:
    base = EngineConfig(model_path="d27.gguf", n_ctx=16384, kv_type="q8_0")
    with_draft = EngineConfig(model_path="d27.gguf", draft_model_path="d15.gguf", n_ctx=16384, kv_type="q8_0")
    a = estimate(base, gpu=True, device=rtx4090(), host_available=32 * GiB, read=_read)
    b = estimate(with_draft, gpu=True, device=rtx4090(), host_available=32 * GiB, read=_read)
    assert b.draft is not None
    assert b.draft.kv_device == sum(kv_bytes_per_token(D15, "f16")) * 16384
    assert b.need_device > a.need_device + b.draft.weights_device


def test_partial_offload_moves_layers_and_their_kv_to_the_host() -> None:
    full = estimate(
        EngineConfig(model_path="d27.gguf", n_ctx=8192),
        gpu=True,
        device=rtx4090(),
        host_available=64 * GiB,
        read=_read,
    )
    half = estimate(
        EngineConfig(model_path="d27.gguf", n_ctx=8192, gpu_layers=32),
        gpu=True,
        device=rtx4090(),
        host_available=64 * GiB,
        read=_read,
    )
    assert half.target.offloaded == 32 and half.target.kv_device == full.target.kv_device // 2
    assert half.need_device < full.need_device and half.need_host > full.need_host


def test_cpu_build_checks_system_memory() -> None:
    cfg = EngineConfig(model_path="d27.gguf", n_ctx=32768, gpu_layers=0)
    rep = estimate(cfg, gpu=False, device=None, host_available=20 * GiB, read=_read)
    assert not rep.fits and "in system memory" in rep.message
    assert rep.need_device == 0
    assert estimate(
        EngineConfig(model_path="d15.gguf", n_ctx=16384),
        gpu=False,
        device=None,
        host_available=20 * GiB,
        read=_read,
    ).fits


def test_check_fit_raises_one_line_fit_error(monkeypatch) -> None:
    monkeypatch.setattr(memfit, "read_gguf", _read)
    cfg = EngineConfig(model_path="d27.gguf", n_ctx=32768)
    with pytest.raises(FitError) as e:
        check_fit(cfg, gpu=True, device=rtx4090(20.0), host_available=64 * GiB)
    assert e.value.report is not None and not e.value.report.fits
    assert "\n" not in str(e.value)
    rep = check_fit(
        cfg,
        gpu=True,
        device=DeviceMemory("cuda", "NVIDIA H200", 141 * GiB, 139 * GiB),
        host_available=64 * GiB,
    )
    assert rep.fits and rep.to_dict()["need_device_gib"] > 20


def test_unknown_device_memory_is_a_warning_not_an_error(monkeypatch) -> None:
    monkeypatch.setattr(memfit, "read_gguf", _read)
    monkeypatch.setattr(memfit, "gpu_devices", lambda: None)
    rep = check_fit(EngineConfig(model_path="d27.gguf", n_ctx=32768), gpu=True, host_available=64 * GiB)
    assert rep.fits and any("unknown" in w for w in rep.warnings)


def test_probes_parse_nvidia_smi_rocm_smi_and_meminfo(monkeypatch, tmp_path) -> None:
    outputs = {
        "nvidia-smi": "NVIDIA GeForce RTX 4090, 24564, 23012\nNVIDIA GeForce RTX 4090, 24564, 24000\n",
        "rocm-smi": '{"card0": {"VRAM Total Memory (B)": "25753026560", "VRAM Total Used Memory (B)": "1073741824",'
        ' "Card Series": "Radeon RX 7900 XTX"}}',
    }
    monkeypatch.setattr(devices, "_run", lambda cmd, timeout=5.0: outputs.get(cmd[0]))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    d = devices.nvidia_devices()
    assert d is not None and d.count == 2 and d.free == (23012 + 24000) * (1 << 20)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    d = devices.nvidia_devices()
    assert d is not None and d.count == 1 and d.free == 24000 * (1 << 20)
    r = devices.rocm_devices()
    assert r is not None and r.name == "Radeon RX 7900 XTX" and r.free == 25753026560 - 1073741824
    mi = tmp_path / "meminfo"
    mi.write_text("MemTotal:       24000000 kB\nMemFree:  1000 kB\nMemAvailable:   12000000 kB\n")
    assert devices.host_memory(str(mi)) == (24000000 * 1024, 12000000 * 1024)


def test_the_side_prefill_is_counted_before_it_takes_memory() -> None:
    cfg = EngineConfig(model_path="d15.gguf", n_ctx=16384)
    roomy = estimate(cfg, gpu=False, device=None, host_available=24 * GiB, read=_read)
    side = roomy.side_prefill_bytes
    assert side >= roomy.target.kv_host > 0 and roomy.host_room_for(side)
    tight = estimate(cfg, gpu=False, device=None, host_available=int(roomy.need_host * 1.04), read=_read)
    assert tight.fits and not tight.host_room_for(side)  # the engine fits, its optional second cache does not
    assert estimate(cfg, gpu=False, device=None, host_available=0, read=_read).host_room_for(side)  # unknown: allowed
    shown = roomy.to_dict(), tight.to_dict()
    assert shown[0]["side_context_gib"] == shown[1]["side_context_gib"] == round(side / GiB, 3)  # the report says what it costs
    assert shown[0]["side_context_room"] is True and shown[1]["side_context_room"] is False
