"""``python -m engine.lab.fit MODEL ...``: will this model fit? (the check itself is engine.memfit)."""

from __future__ import annotations

import json

from engine.config import EngineConfig
from engine.devices import DeviceMemory, GiB
from engine.memfit import KV_BYTES, check_fit


def main(argv: list[str] | None = None) -> int:
    """``python -m engine.lab.fit MODEL [--ctx N] [--kv-type T] [--gpu-layers N] [--draft PATH] [--free-gib G]``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m engine.lab.fit", description="will this model fit?")
    ap.add_argument("model")
    ap.add_argument("--draft")
    ap.add_argument("--ctx", type=int, default=16384)
    ap.add_argument("--kv-type", default="f16", choices=list(KV_BYTES))
    ap.add_argument("--gpu-layers", type=int, default=-1)
    ap.add_argument("--flash-attn", choices=["on", "off", "auto"], default="auto")
    ap.add_argument("--free-gib", type=float, help="pretend a GPU with this much free memory")
    ap.add_argument("--gpu-name", default="GPU")
    a = ap.parse_args(argv)
    cfg = EngineConfig(
        model_path=a.model,
        draft_model_path=a.draft,
        n_ctx=a.ctx,
        kv_type=a.kv_type,
        gpu_layers=a.gpu_layers,
        flash_attn={"on": True, "off": False, "auto": None}[a.flash_attn],
    )
    dev = (
        DeviceMemory("cuda", a.gpu_name, int(a.free_gib * GiB), int(a.free_gib * GiB)) if a.free_gib else None
    )
    rep = check_fit(cfg, gpu=True if dev else None, device=dev, raise_error=False)
    print(json.dumps(rep.to_dict(), indent=1))
    print("fits" if rep.fits else "does not fit: " + rep.message)
    return 0 if rep.fits else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

