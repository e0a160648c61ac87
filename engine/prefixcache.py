"""Saved KV states of prompt prefixes, so a new process pays only for what is new in its prompt.

Every process of ``tau edit``, ``tau run`` or the TUI starts its prompt with the same fixed
part (system prompt, tool schema). After a generation whose prompt starts a prefix no saved
state covers, the context's KV cache is saved (llama_state_seq_save_file, in the backend)
with its token list beside it; a later process finds the saved state sharing the longest
prefix with its prompt, loads it and truncates it to that shared prefix. States live under
the cache directory per model, llama.cpp build, KV type and flash attention (a state only
loads into a context of the same layout), at most ``KEEP`` of them, least recently used out.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from engine.target import Target

MIN_PREFIX = 32  # shorter shared prefixes are not worth a file load
MIN_NEW = 128  # a prompt must add this many freshly computed tokens to be worth saving
KEEP = 6
MAX_SAVE_TOKENS = 4096  # a KV state grows with its tokens (28 KB each for the 1.5B at f16): longer ones are not kept


@dataclass(frozen=True)
class Match:
    path: Path  # the state file
    common: int  # tokens the prompt shares with it


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    x = np.asarray(a[:n], dtype=np.int64) != np.asarray(b[:n], dtype=np.int64)
    return int(np.argmax(x)) if x.any() else n


class PrefixCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _states(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(self.root.glob("*.kv"), key=lambda p: p.stat().st_mtime, reverse=True)

    @staticmethod
    def _tokens(state: Path) -> np.ndarray | None:
        try:
            return np.load(state.with_suffix(".npy"), allow_pickle=False)
        except (OSError, ValueError):
            return None

    def best(self, prompt: Sequence[int]) -> Match | None:
        """The saved state sharing the longest prefix (at least MIN_PREFIX tokens) with ``prompt``."""
        best: Match | None = None
        for st in self._states():
            toks = self._tokens(st)
            if toks is None:
                continue
            n = common_prefix(toks.tolist(), prompt)
            if n >= MIN_PREFIX and (best is None or n > best.common):
                best = Match(st, n)
        return best

    def touch(self, m: Match) -> None:
        try:
            os.utime(m.path)
        except OSError:
            pass

    def should_save(self, prompt: Sequence[int], fresh: int, kv_tokens: int = 0) -> bool:
        """Worth saving: enough was computed afresh, at least MIN_NEW of the prompt's tokens lie
        beyond what the best saved state covers (a second edit of the same file loads the system
        prompt and the file, not the system prompt alone), and the state is not too big."""
        if fresh < MIN_NEW or max(kv_tokens, len(prompt)) > MAX_SAVE_TOKENS:
            return False
        m = self.best(prompt)
        return m is None or len(prompt) - m.common >= MIN_NEW

    def path_for(self, tokens: Sequence[int]) -> Path:
        digest = hashlib.sha1(np.asarray(tokens, dtype=np.int32).tobytes()).hexdigest()[:16]
        return self.root / f"{digest}.kv"

    def saved(self, path: Path, tokens: Sequence[int]) -> None:
        """Record the token list of a state the backend just wrote to ``path``, then trim old states."""
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
        np.save(tmp, np.asarray(tokens, dtype=np.int32), allow_pickle=False)
        os.replace(tmp, path.with_suffix(".npy"))
        for old in self._states()[KEEP:]:
            for f in (old, old.with_suffix(".npy")):
                try:
                    f.unlink()
                except OSError:
                    pass


def restore_prefix(cache: PrefixCache | None, target: Target, prompt: Sequence[int]) -> None:
    """Load the saved KV state sharing the longest prefix with ``prompt`` into the target's decode
    context, when it shares MIN_PREFIX more than what the context holds already."""
    if cache is None:
        return
    m = cache.best(prompt)
    if m is None or m.common < common_prefix(target.kv, prompt) + MIN_PREFIX:
        return
    target.home()
    toks = target.ctx.load_state(m.path)
    target.kv = toks or []  # a failed load leaves the cache empty: prefill starts over
    if toks:
        cache.touch(m)


def save_prefix(cache: PrefixCache | None, target: Target, prompt: Sequence[int], fresh: int) -> None:
    """Save what the decode context holds after ``prompt``'s generation, when ``fresh`` tokens of it
    were computed anew and no saved state covers it (``PrefixCache.should_save``)."""
    if cache is None or not cache.should_save(prompt, fresh, len(target.kv)):
        return
    target.home()
    path = cache.path_for(target.kv)
    if target.ctx.save_state(path, target.kv):
        cache.saved(path, target.kv)
