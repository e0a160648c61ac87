"""tau's configuration: a frozen dataclass loaded from ``config.toml`` in the user config dir.

Precedence: defaults < config file < environment (TAU_*) < command-line flags.
"""

from __future__ import annotations

import os
import stat
import sys
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

APP = "tau"


def config_dir() -> Path:
    return Path(os.environ.get("TAU_CONFIG_DIR") or platformdirs.user_config_dir(APP))


def state_dir() -> Path:
    return Path(os.environ.get("TAU_STATE_DIR") or platformdirs.user_state_dir(APP))


def runtime_dir() -> Path:
    env = os.environ.get("TAU_RUNTIME_DIR")
    if env:
        return Path(env)
    if sys.platform.startswith("linux") and not os.environ.get("XDG_RUNTIME_DIR"):
        # platformdirs would warn (RuntimeDirWarning) on every command and fall back to /tmp
        return _quiet_runtime_dir()
    try:
        return Path(platformdirs.user_runtime_dir(APP))
    except Exception:  # pragma: no cover - platform without a runtime dir
        return state_dir() / "run"


def _quiet_runtime_dir() -> Path:
    """``/run/user/<uid>/tau`` when that is the user's private directory (the usual place
    without XDG_RUNTIME_DIR, over ssh or in a container), else ``<state dir>/run``."""
    base = Path(f"/run/user/{os.getuid()}")
    try:
        st = base.lstat()
        private = stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077
    except OSError:
        private = False
    return base / APP if private and os.access(base, os.W_OK) else state_dir() / "run"


class ConfigError(ValueError):
    """A bad configuration value or file; the message is shown to the user as one line."""


@dataclass(frozen=True)
class Config:
    # models ("" = the default model pack; draft_model "none" = no draft model)
    model: str = ""
    draft_model: str = ""
    n_ctx: int = 16384
    n_batch: int = 512
    threads: int = 0  # 0 = all physical cores
    gpu_layers: int = -1  # -1 = all (ignored on CPU builds)
    flash_attn: bool | None = None  # None = llama.cpp's auto
    cpu_extra_buffers: bool | None = None  # repacked CPU weights (with or without AMX); None = calibrated per machine
    kv_type: str = "f16"  # target KV cache type: f16 | q8_0 | q4_0 (the drafter's stays f16)
    side_prefill: bool | None = None  # long prompts on the other CPU weight layout; None = where calibrated faster
    side_verify: bool | None = None  # wide verify passes there too; None = where measured cheaper
    verify_threads: int = -1  # host threads preparing a verify pass's rows: -1 = auto (none: timed, they did not pay), 0 = none, N = N threads
    # speculation
    spec: str = "auto"  # off | ngram | draft | mtp | auto
    ngram_key: int = 0  # 0 = engine default
    max_window: int = 0  # 0 = engine default
    memory_bandwidth_gbs: float = 0.0  # 0 = measure once and cache
    # agent / app
    mode: str = "ask"  # ask | auto-edit | full-auto
    temperature: float = 0.2
    top_p: float = 0.95
    temperature_last: bool = False  # llama.cpp's sampler order: top-k, top-p and min-p before the temperature
    max_steps: int = 30
    theme: str = "tau-dark"
    endpoint: str = ""  # OpenAI-compatible endpoint instead of a local model
    local: bool = False  # always load in-process, even when a tau server holds the model
    prime: bool = True  # compute the conversation's prompt while the user types (interactive sessions)
    api_key: str = ""
    # shell sandbox (tools.sandbox); also written as a [shell] table: network = true
    shell_sandbox: bool = True  # run_shell inside bubblewrap when it is installed
    shell_network: bool | None = None  # None = on in ask, off in auto-edit and full-auto
    shell_env_allow: str = ""  # comma-separated variable names or globs the shell may see (e.g. GITHUB_TOKEN)

    def with_overrides(self, **kw: Any) -> Config:
        known = {f.name for f in fields(self)}
        clean = {k: v for k, v in kw.items() if k in known and v is not None}
        return replace(self, **clean)


def config_path() -> Path:
    return config_dir() / "config.toml"


def _coerce(name: str, value: Any, default: Any) -> Any:
    typ = type(default)
    if default is None or isinstance(default, bool):
        if value is None or isinstance(value, bool):
            return value
        raise ConfigError(f"config: {name} must be true or false, got {value!r}")
    if typ is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if typ is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if typ is str and isinstance(value, str):
        return value
    raise ConfigError(f"config: {name} must be {typ.__name__}, got {value!r}")


def load_config(path: Path | None = None) -> Config:
    """Load the config file (missing file = defaults). Unknown keys and bad types are errors."""
    path = path or config_path()
    cfg = Config()
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"config file {path} is not valid TOML: {e}") from None
    defaults = {f.name: getattr(cfg, f.name) for f in fields(cfg)}
    values: dict[str, Any] = {}
    for k, v in _flatten_tables(data).items():
        key = k.replace("-", "_")
        if key not in defaults:
            raise ConfigError(f"config file {path}: unknown key {k!r}")
        values[key] = _coerce(key, v, defaults[key])
    for key, default in defaults.items():
        env = os.environ.get("TAU_" + key.upper())
        if env is None:
            continue
        if isinstance(default, bool) or default is None:
            values[key] = env.lower() in ("1", "true", "yes", "on")
        elif isinstance(default, int):
            values[key] = int(env)
        elif isinstance(default, float):
            values[key] = float(env)
        else:
            values[key] = env
    cfg = replace(cfg, **values)
    validate(cfg)
    return cfg


def _flatten_tables(data: dict[str, Any]) -> dict[str, Any]:
    """``[shell] network = true`` is ``shell_network = true``."""
    flat: dict[str, Any] = {}
    for k, v in data.items():
        if isinstance(v, dict):
            flat.update({f"{k}_{sub}": value for sub, value in v.items()})
        else:
            flat[k] = v
    return flat


def validate(cfg: Config) -> None:
    if cfg.spec not in ("off", "ngram", "draft", "mtp", "auto"):
        raise ConfigError(f"spec must be off|ngram|draft|mtp|auto, got {cfg.spec!r}")
    if cfg.mode not in ("ask", "auto-edit", "full-auto"):
        raise ConfigError(f"mode must be ask|auto-edit|full-auto, got {cfg.mode!r}")
    if cfg.kv_type not in ("f16", "q8_0", "q4_0", "f32", "bf16"):
        raise ConfigError(f"kv_type must be f16|q8_0|q4_0, got {cfg.kv_type!r}")
    if cfg.n_ctx < 256:
        raise ConfigError(f"n_ctx must be at least 256, got {cfg.n_ctx}")
    if cfg.verify_threads < -1:
        raise ConfigError(f"verify_threads must be -1 (auto), 0 (none) or a thread count, got {cfg.verify_threads}")


def save_setting(key: str, value: Any, path: Path | None = None) -> None:
    """Persist one key (e.g. theme) into the config file, keeping the others."""
    path = path or config_path()
    data: dict[str, Any] = {}
    if path.exists():
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    data[key] = value
    lines = []
    for k, v in data.items():
        if isinstance(v, bool):
            lines.append(f"{k} = {'true' if v else 'false'}")
        elif isinstance(v, (int, float)):
            lines.append(f"{k} = {v}")
        else:
            lines.append(f'{k} = "{str(v)}"'.replace("\\", "\\\\"))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)


__all__ = ["Config", "ConfigError", "load_config", "save_setting"]
