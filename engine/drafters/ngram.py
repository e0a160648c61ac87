"""The n-gram overlay: drafts by finding the current suffix earlier in known text.

An incremental index maps the last k tokens (for a few key lengths, longest first) to the
positions that followed them, in the request's history (prompt + everything generated)
and in any registered text (repository files). The draft copies what followed the best
occurrence: the one whose context matches furthest back (ties go to the continuation seen
most often, then to the most recent), as far as the caller's window allows.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from engine.drafters.base import Draft

HISTORY = 0  # source id of the request's own token history

DEFAULT_KEY_LEN = 4
MAX_POSITIONS = 8  # candidates kept per key
MATCH_PROBE = 48  # how far back a candidate's context is compared


class NgramDrafter:
    name = "ngram"

    def __init__(self, key_len: int = DEFAULT_KEY_LEN, min_key_len: int = 2, name: str = "ngram") -> None:
        if key_len < 1 or min_key_len < 1 or min_key_len > key_len:
            raise ValueError(f"bad n-gram key lengths {min_key_len}..{key_len}")
        self.name = name
        self.key_lens = tuple(range(key_len, min_key_len - 1, -1))
        self._lock = threading.Lock()
        self._sources: dict[int, list[int]] = {HISTORY: []}
        self._names: dict[str, int] = {}
        self._next_id = 1
        self._index: dict[tuple[int, ...], list[tuple[int, int]]] = {}

    # -- sources ---------------------------------------------------------------------------
    def add_source(self, key: str, tokens: Sequence[int]) -> None:
        """Register (or replace) a text's tokens under ``key``."""
        with self._lock:
            old = self._names.pop(key, None)
            if old is not None:
                del self._sources[old]
            sid = self._next_id
            self._next_id += 1
            self._names[key] = sid
            toks = list(tokens)
            self._sources[sid] = toks
            self._index_range(sid, toks, 0)
            dead = sum(1 for v in self._index.values() for s, _ in v if s not in self._sources)
            if dead > 4 * len(self._index) + 100_000:
                self._rebuild()

    def remove_source(self, key: str) -> None:
        with self._lock:
            sid = self._names.pop(key, None)
            if sid is not None:
                del self._sources[sid]

    @property
    def n_sources(self) -> int:
        return len(self._sources) - 1

    def _rebuild(self) -> None:
        self._index.clear()
        for sid, toks in self._sources.items():
            self._index_range(sid, toks, 0)

    def _index_range(self, sid: int, toks: list[int], start: int) -> None:
        """Index the keys that end just before positions start+1..len(toks)."""
        idx = self._index
        for k in self.key_lens:
            for end in range(max(start, k), len(toks)):
                key = tuple(toks[end - k : end])
                lst = idx.get(key)
                if lst is None:
                    idx[key] = [(sid, end)]
                else:
                    lst.append((sid, end))
                    if len(lst) > MAX_POSITIONS:
                        del lst[0]

    def _sync_history(self, history: Sequence[int]) -> list[int]:
        hist = self._sources[HISTORY]
        n = len(hist)
        if n and (len(history) < n or history[n - 1] != hist[n - 1] or list(history[:n]) != hist):
            # a different sequence: keep the common prefix (stale entries are filtered on use)
            common = 0
            m = min(n, len(history))
            while common < m and hist[common] == history[common]:
                common += 1
            del hist[common:]
            n = common
        if len(history) > n:
            hist.extend(history[n:])
            # keys ending at positions >= n (new continuations) need the old tail too
            self._index_range(HISTORY, hist, max(0, n - 1))
        return hist

    # -- Drafter protocol ----------------------------------------------------------------
    def reset(self) -> None:
        with self._lock:
            self._sources[HISTORY] = []

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        with self._lock:
            hist = self._sync_history(history)
            if max_len <= 0 or not hist:
                return Draft((), self.name)
            for k in self.key_lens:
                if len(hist) < k:
                    continue
                key = tuple(hist[-k:])
                cands = self._index.get(key)
                if not cands:
                    continue
                best = self._best(hist, key, cands)
                if best is None:
                    continue
                sid, pos, matched = best
                src = self._sources[sid]
                limit = len(src) if sid != HISTORY else len(hist)
                toks = tuple(src[pos : min(pos + max_len, limit)])
                if toks:
                    return Draft(toks, self.name, confidence=matched)
            return Draft((), self.name)

    def _best(self, hist: list[int], key: tuple[int, ...], cands: list[tuple[int, int]]) -> tuple[int, int, int] | None:
        k = len(key)
        n = len(hist)
        votes: dict[int, int] = {}
        live: list[tuple[int, int, int]] = []
        for sid, pos in cands:
            src = self._sources.get(sid)
            if src is None:
                continue
            if sid == HISTORY and pos >= n:
                continue  # the current suffix itself has no continuation yet
            if pos >= len(src) or tuple(src[pos - k : pos]) != key:
                continue  # stale entry
            # how far back does the context agree?
            m = k
            while m < MATCH_PROBE and pos - m - 1 >= 0 and n - m - 1 >= 0 and src[pos - m - 1] == hist[n - m - 1]:
                m += 1
            nxt = src[pos]
            votes[nxt] = votes.get(nxt, 0) + 1
            live.append((sid, pos, m))
        if not live:
            return None
        best = max(
            range(len(live)),
            key=lambda j: (live[j][2], votes[self._sources[live[j][0]][live[j][1]]], j),
        )
        return live[best]
