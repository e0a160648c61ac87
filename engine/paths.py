"""Where the engine keeps its files (overridable with TAU_CACHE_DIR)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def cache_dir() -> Path:
    return Path(os.environ.get("TAU_CACHE_DIR") or platformdirs.user_cache_dir("tau"))
