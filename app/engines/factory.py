"""Opening the engine the app runs on: an endpoint, a running ``tau serve``, or the model in-process.

``open_engine(cfg)`` decides in that order: ``cfg.endpoint`` -> RemoteEngine on that
OpenAI-compatible endpoint; a live ``tau serve`` announcing the same model (unless
``local``) -> RemoteEngine attached to it; else ``LocalEngine.load``. Every failure is an
:class:`EngineOpenError` with a one-line message, never a traceback.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import httpx

import app.wire  # noqa: F401  (importing it gives the engine each model family's renderer)
from app import announce
from app.config import Config, state_dir
from engine.config import EngineConfig
from engine.paths import cache_dir
from engine.types import Engine

Progress = Callable[[str, float], None]


class EngineOpenError(RuntimeError):
    """The engine could not be opened; the message is one line for the user."""


def _one_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _check_model_file(path: str, what: str) -> None:
    """Missing, truncated or non-GGUF files become a one-line error before llama.cpp sees them."""
    p = Path(path)
    if not p.exists():
        raise EngineOpenError(f"{what} {path} does not exist")
    if not p.is_file():
        raise EngineOpenError(f"{what} {path} is not a file")
    try:
        with open(p, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise EngineOpenError(f"cannot read {what} {path}: {e.strerror or e}") from None
    if magic != b"GGUF":
        raise EngineOpenError(f"{what} {path} is not a GGUF file")
    try:
        from engine.gguf_info import read_gguf
    except ImportError:  # pragma: no cover - engine without the header reader
        return
    try:
        read_gguf(p)
    except Exception as e:
        raise EngineOpenError(f"{what} {path}: {_one_line(e)}") from None


def resolve_model_paths(cfg: Config, progress: Progress | None = None) -> tuple[str, str | None]:
    """(target path, draft path or None). "" means the default model pack (assembled on first use)."""
    try:
        if cfg.model:
            target = str(Path(cfg.model).expanduser())
        else:
            from engine.modelpack import default_target_path

            target = str(default_target_path(progress))
        draft: str | None
        if cfg.draft_model.lower() == "none":
            draft = None
        elif cfg.draft_model:
            draft = str(Path(cfg.draft_model).expanduser())
        elif not cfg.model:
            from engine.modelpack import default_draft_path

            draft = str(default_draft_path(progress))
        else:
            draft = None  # the default draft shares the default target's vocabulary only
    except EngineOpenError:
        raise
    except Exception as e:
        raise EngineOpenError(f"default model pack: {_one_line(e)}") from None
    return target, draft


def engine_config(cfg: Config, progress: Progress | None = None, *, draft_always: bool = False) -> EngineConfig:
    """Map the app's Config onto the engine's EngineConfig (resolving the default model pack).
    ``draft_always``: load the draft model even where the machine profile says it cannot pay."""
    target, draft = resolve_model_paths(cfg, progress)
    return EngineConfig(
        model_path=target,
        draft_model_path=draft,
        n_ctx=cfg.n_ctx,
        n_batch=cfg.n_batch,
        threads=cfg.threads,
        gpu_layers=cfg.gpu_layers,
        flash_attn=cfg.flash_attn,
        cpu_extra_buffers=cfg.cpu_extra_buffers,
        kv_type=cfg.kv_type,
        side_prefill=cfg.side_prefill,
        side_verify=cfg.side_verify,
        verify_threads=None if cfg.verify_threads < 0 else cfg.verify_threads,
        spec=cfg.spec,
        ngram_key=cfg.ngram_key,
        max_window=cfg.max_window,
        memory_bandwidth_gbs=cfg.memory_bandwidth_gbs,
        cache_dir=str(cache_dir()),
        log_path=str(state_dir() / "llama.log"),
        calibrate=True,  # settings left on auto are measured once per model and machine
        draft_always=draft_always,
    )


def load_local(cfg: Config, progress: Progress | None = None, *, draft_always: bool = False) -> Engine:
    """Load the model in-process (LocalEngine)."""
    ecfg = engine_config(cfg, progress, draft_always=draft_always)
    _check_model_file(ecfg.model_path, "model")
    if ecfg.draft_model_path:
        _check_model_file(ecfg.draft_model_path, "draft model")
    os.makedirs(state_dir(), exist_ok=True)
    try:
        from engine.local import LocalEngine
    except ImportError as e:
        raise EngineOpenError(f"the local engine is not available: {_one_line(e)}") from None
    try:
        return LocalEngine.load(ecfg, progress=progress)
    except EngineOpenError:
        raise
    except MemoryError:
        raise EngineOpenError(f"not enough memory to load {ecfg.model_path}") from None
    except Exception as e:
        raise EngineOpenError(f"cannot load {ecfg.model_path}: {_one_line(e)}") from None


def _healthy(ann: announce.Announcement, timeout: float = 2.0) -> bool:
    """The announced server answers /health, and it is the announcing process."""
    try:
        r = httpx.get(ann.url + "/health", timeout=timeout, trust_env=False)
        return r.status_code == 200 and r.json().get("pid") == ann.pid
    except (httpx.HTTPError, ValueError, AttributeError):
        return False


def attach_target(cfg: Config, notify: Callable[[str], None] | None = None,
                  wait_s: float = 300.0) -> announce.Announcement | None:
    """The running ``tau serve`` that holds cfg's model, if any (waiting while it loads it)."""
    ann = announce.find_server(cfg.model)
    if ann is not None and ann.status == "loading":
        if notify is not None:
            notify(f"tau serve at {ann.describe()} is loading the model; waiting for it")
        deadline = time.monotonic() + wait_s
        while ann is not None and ann.status == "loading" and time.monotonic() < deadline:
            time.sleep(0.25)
            ann = announce.find_server(cfg.model)
    if ann is None or ann.status != "ready" or not _healthy(ann):
        return None
    return ann


def open_engine(
    cfg: Config,
    *,
    notify: Callable[[str], None] | None = None,
    local: bool = False,
    progress: Progress | None = None,
) -> Engine:
    """The engine for cfg: endpoint, attached ``tau serve``, or LocalEngine (see module doc)."""
    from app.engines.remote import RemoteEngine, RemoteEngineError

    say = notify or (lambda _msg: None)
    if cfg.endpoint:
        try:
            eng = RemoteEngine(cfg.endpoint, api_key=cfg.api_key or None, n_ctx=cfg.n_ctx)
        except RemoteEngineError as e:
            raise EngineOpenError(str(e)) from None
        say(f"using endpoint {eng.root} (model {eng.info.name})")
        return eng
    if not (local or cfg.local):
        ann = attach_target(cfg, notify)
        if ann is not None:
            key = cfg.api_key or os.environ.get("TAU_SERVE_API_KEY") or None
            if ann.api_key and not key:
                raise EngineOpenError(
                    f"tau serve at {ann.describe()} holds this model and requires an API key: "
                    "pass --api-key (or set TAU_SERVE_API_KEY), or use --local"
                )
            try:
                eng = RemoteEngine(ann.url, api_key=key, kind="tau", pid=ann.pid, n_ctx=cfg.n_ctx)
            except RemoteEngineError as e:
                raise EngineOpenError(f"cannot attach to tau serve at {ann.describe()}: {e}") from None
            say(f"attached to tau serve at {ann.url} (pid {ann.pid})")
            return eng
    return load_local(cfg, progress)
