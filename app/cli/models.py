"""``tau models``: the configured target and drafter, and which drafters apply."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.cli.main import UsageError, add_model_flags
from app.config import Config
from app.progress import ProgressBar
from engine import modelpack
from engine.gguf_info import GGUFError, GGUFInfo, read_gguf, vocab_mismatch


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="show the configured target and draft models")
    p.add_argument("--json", action="store_true")
    p.add_argument("--calibrate", action="store_true",
                   help="measure this machine's CPU weight layout, threads and flash attention again now")
    p.add_argument("--rebuild-amx", action="store_true",
                   help="rebuild llama-cpp-python with AMX's tile configuration fixed (GCC 12 breaks it; "
                        "about 6 minutes on 2 cores), then calibrate again")
    add_model_flags(p)
    p.set_defaults(func=run)


def _describe(role: str, path: str | None, pack: modelpack.PackModel | None) -> tuple[dict, GGUFInfo | None]:
    d: dict = {"role": role, "path": path, "ready": False}
    if pack is not None and path is None:
        d["path"] = str(modelpack.pack_path(pack))
        d["source"] = f"default pack ({pack.description})"
        if not modelpack.is_ready(pack):
            try:
                modelpack._part_files(pack)
                d["status"] = "installed, assembled on first use"
            except modelpack.ModelPackError as e:
                d["status"] = str(e)
            return d, None
        path = d["path"]
    assert path is not None
    try:
        info = read_gguf(path)
    except GGUFError as e:
        d["status"] = str(e)
        return d, None
    d.update(
        ready=True,
        status="ready",
        name=info.name,
        size_bytes=info.file_size,
        arch=info.arch,
        quant=info.quant,
        n_vocab=info.n_vocab,
        context_length=info.meta("context_length"),
        weight_bytes_per_token=info.bytes_per_token,
        mtp_layers=info.mtp_layers,
    )
    return d, info


def collect(cfg: Config) -> dict:
    target_path = str(Path(cfg.model).expanduser()) if cfg.model else None
    t, tinfo = _describe("target", target_path, None if cfg.model else modelpack.TARGET)
    draft: dict | None = None
    dinfo = None
    if cfg.draft_model.lower() != "none":
        if cfg.draft_model:
            draft, dinfo = _describe("draft", str(Path(cfg.draft_model).expanduser()), None)
        elif not cfg.model:
            draft, dinfo = _describe("draft", None, modelpack.DRAFT)
    drafters = ["ngram (prompt, output and repository files)"]
    if draft is not None:
        if tinfo is not None and dinfo is not None:
            why = vocab_mismatch(tinfo, dinfo)
            draft["compatible"] = why is None
            if why:
                draft["status"] = f"cannot draft: {why}"
            else:
                drafters.append(f"draft model ({dinfo.name})")
        elif draft.get("status", "").startswith("installed"):
            drafters.append("draft model (after assembly)")
    if tinfo is not None:
        if tinfo.mtp_layers:
            drafters.append(f"MTP heads ({tinfo.mtp_layers} layer(s))")
        t["mtp"] = "present" if tinfo.mtp_layers else "none in this GGUF"
    return {"target": t, "draft": draft, "drafters": drafters, "calibration": _calibration(cfg, t)}


def _engine_config(cfg: Config, model_path: str):
    from engine.config import EngineConfig
    from engine.paths import cache_dir

    return EngineConfig(model_path=model_path, threads=cfg.threads, flash_attn=cfg.flash_attn,
                        cpu_extra_buffers=cfg.cpu_extra_buffers, kv_type=cfg.kv_type, cache_dir=str(cache_dir()))


def _recalibrate(cfg: Config) -> None:
    from engine.calibrate import recalibrate

    if not cfg.model and not modelpack.is_ready(modelpack.TARGET):
        try:  # a fresh install has the pack's parts but no model yet: assemble it, as the first load would
            modelpack.default_target_path(ProgressBar())
        except modelpack.ModelPackError as e:
            raise UsageError(f"cannot calibrate: {e}") from None
    t, _ = _describe("target", str(Path(cfg.model).expanduser()) if cfg.model else None,
                     None if cfg.model else modelpack.TARGET)
    if not t.get("ready"):
        raise UsageError(f"cannot calibrate: the target is not ready ({t.get('status')})")
    print("calibrating (a child process per CPU weight layout; seconds on an idle machine) ...", file=sys.stderr)
    if recalibrate(_engine_config(cfg, t["path"])) is None:
        print("tau: calibration measured nothing (every candidate failed); the defaults stay", file=sys.stderr)


def _calibration(cfg: Config, target: dict) -> dict:
    """The load settings calibrated for the target on this machine (engine.calibrate), or why none."""
    from engine.calibrate import describe

    if not target.get("ready"):
        return {"status": "target not ready"}
    ecfg = _engine_config(cfg, target["path"])
    if cfg.cpu_extra_buffers is not None and cfg.flash_attn is not None and cfg.threads:
        return {"status": "set in the config", "extra_buffers": cfg.cpu_extra_buffers,
                "flash_attn": cfg.flash_attn, "threads": cfg.threads}
    found = describe(ecfg.cache_dir, target["path"], ecfg)
    if found is None:
        return {"status": "not calibrated yet: measured at the first load on this machine"}
    c, own = found
    note = "" if own else " (measured under another llama.cpp build; this one calibrates at its first load)"
    return {"status": c.label() + note, "this_build": own, "layout": c.layout, "extra_buffers": c.extra_buffers, "flash_attn": c.flash_attn,
            "threads": c.threads,
            "step_ms": round(c.step_s * 1e3, 2), "verify_ms": round(c.verify_s * 1e3, 2),
            "prefill_tok_s": round(1 / c.prefill_s, 1) if c.prefill_s else None,
            "side_prefill_tok_s": round(1 / c.side_prefill_s, 1) if c.side_prefill_s else None,
            "ruled_out": list(c.ruled_out), "hint": _amx_hint(c.ruled_out) if own else None}


def _amx_hint(ruled_out) -> str | None:
    """Why AMX's layout died, where it is GCC's tile-config header, and the command that fixes it."""
    import signal

    from engine.calibrate import ruled_out_label

    if ruled_out_label("repacked", -signal.SIGILL) not in ruled_out:  # the AMX layout's child died of SIGILL
        return None
    from engine.lab import amxbuild

    if not amxbuild.check().narrow:
        return None
    return ("llama.cpp's AMX kernels died of SIGILL: this compiler's _tile_loadconfig drops the tile "
            "configuration; `tau models --rebuild-amx` rebuilds llama-cpp-python with it fixed")


def _rebuild_amx() -> None:
    from engine.lab import amxbuild
    from engine.paths import cache_dir

    try:
        fix = amxbuild.rebuild(Path(cache_dir()) / "amxfix")
    except amxbuild.AmxBuildError as e:
        raise UsageError(f"cannot rebuild for AMX: {e}") from None
    print(f"rebuilt llama-cpp-python with the tile header from {fix}", file=sys.stderr)


def run(args: argparse.Namespace, cfg: Config) -> int:
    if args.rebuild_amx:
        _rebuild_amx()
    if args.calibrate or args.rebuild_amx:
        _recalibrate(cfg)
    data = collect(cfg)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0 if data["target"]["ready"] or "first use" in data["target"].get("status", "") else 1
    for m in (data["target"], data["draft"]):
        if m is None:
            continue
        print(f"{m['role']}: {m.get('name') or m.get('source') or ''}")
        print(f"  path    {m['path']}")
        if m.get("ready"):
            print(f"  size    {m['size_bytes'] / 1e9:.2f} GB   arch {m['arch']}   quant {m['quant']}   vocab {m['n_vocab']}")
            print(f"  reads   {m['weight_bytes_per_token'] / 1e9:.2f} GB of weights per token")
            if m["role"] == "target":
                print(f"  MTP     {m['mtp']}")
        print(f"  status  {m.get('status')}")
    if data["draft"] is None:
        print("draft: none configured")
    print("drafters: " + ", ".join(data["drafters"]))
    print("calibration: " + data["calibration"]["status"])
    if data["calibration"].get("hint"):
        print("  hint: " + data["calibration"]["hint"])
    ok = data["target"]["ready"] or "first use" in data["target"].get("status", "")
    return 0 if ok else 1
