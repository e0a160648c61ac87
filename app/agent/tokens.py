"""Token counting: the engine's own tokenizer, or an estimate where it has none.

The estimate is tiktoken's ``cl100k_base`` when its BPE file is already cached (tiktoken
would otherwise try to download it), else ``len(text) / 3.5``.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.types import Engine

if TYPE_CHECKING:
    import tiktoken

_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def _tiktoken_cached() -> bool:
    cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if cache is None:
        cache = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache:
        return False
    return os.path.exists(os.path.join(cache, hashlib.sha1(_CL100K_URL.encode()).hexdigest()))


@functools.lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding | None:
    if not _tiktoken_cached():
        return None
    try:
        import tiktoken

        return tiktoken.get_encoding("cl100k_base")
    except Exception:
        return None


def estimate_tokens(text: str) -> int:
    """Model-independent token estimate (tiktoken cl100k_base, or chars / 3.5)."""
    enc = _encoding()
    if enc is not None:
        return len(enc.encode(text, disallowed_special=()))
    return math.ceil(len(text) / 3.5)


def counter_for(engine: Engine) -> Callable[[str], int]:
    """The engine's ``count_tokens`` when it works, else ``estimate_tokens``."""
    try:
        fn = engine.count_tokens
        fn("probe")
    except Exception:  # an engine without a tokenizer
        return estimate_tokens

    def count(text: str) -> int:
        try:
            return int(fn(text))
        except Exception:
            return estimate_tokens(text)

    return count
