"""The n-gram overlay: drafts by finding the current suffix earlier in known text.

An incremental index maps the last k tokens (for a few key lengths, longest first) to the
positions that followed them, in the request's history (prompt + everything generated)
and in any registered text (repository files). The draft copies what followed the best
occurrence: the one whose context matches furthest back (ties go to the continuation seen
most often, then to the most recent), as far as the caller's window allows.

It also follows the copy it is in. Once the output has matched a draft's first tokens
(verified, or emitted by plain passes that did not use it), the place it came from
becomes the anchor, which moves along while the output keeps matching the
source. When the output departs from it (a renamed symbol, an inserted line), the drafter
looks for the output's last few tokens just around the anchor, so the copy resumes a
token or two after the change instead of after a long context match elsewhere; such
drafts are flagged ``resync`` and the policy learns their acceptance apart. A copy that ran
long stays the drafter's home while shorter ones (a name the instruction spells out, matched for
a few tokens inside an inserted line) hold the anchor, and the output is looked for around it too.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from engine.drafters.base import Draft

HISTORY = 0  # source id of the request's own token history

DEFAULT_KEY_LEN = 4
MAX_POSITIONS = 8  # candidates kept per key
MATCH_PROBE = 48  # how far back a candidate's context is compared
RESYNC_BEHIND = 8  # a resync may land this far before the anchor (the output repeats a bit)...
RESYNC_AHEAD = 96  # ...or this far after it (the output dropped source text)
RESYNC_KEY = 6  # output tokens compared at each resync position
CONFIRM = 2  # output tokens that must match a draft before its place becomes the anchor
RESYNC_MAX_MATCH = 16  # a draft that follows the anchor with a literal match this long is an ordinary copy
RESYNC_MIN_RUN = 12  # output tokens the copy must have covered before following it counts as evidence
HOME_JUMP = 16  # a resync this far from where the copy left keeps that place as home (new code read as a jump)
HOME_KEY = 4  # output tokens a resync around the home copy needs after a long detour (three: new code regressed)
OPENING_MIN = 6  # reply tokens that must all copy one place before a draft from there is an opening copy
OPENING_PREAMBLE = 3  # ...after at most this many others that the source has shortly before the copy:
OPENING_LOOKBACK = 256  # a code fence's first line above a file whose first lines (its docstring) the reply dropped
MAX_SOURCES = 256  # registered texts kept; the oldest registration goes first
MAX_SOURCE_TOKENS = 1_000_000  # tokens kept over all registered texts (the index costs ~100x their size)

Anchor = tuple[int, int, int]  # (source id, source position, history length): hist[:h] ends where src[:pos] ends


def match_back(src: list[int], pos: int, hist: list[int], limit: int) -> int:
    """How many tokens just before ``src[pos]`` equal the end of ``hist`` (at most ``limit``)."""
    n = len(hist)
    m = 0
    while m < limit and m < pos and m < n and src[pos - m - 1] == hist[n - m - 1]:
        m += 1
    return m


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
        self._evicted = 0  # tokens of evicted sources whose index entries are still there
        self._index: dict[tuple[int, ...], list[tuple[int, int]]] = {}
        self._anchor: Anchor | None = None  # the copy the output is following
        self._last: Anchor | None = None  # where the last draft came from (an anchor once confirmed)
        self._last_run = 0  # output tokens that have matched it so far
        self._last_follows = False  # it was drafted from the anchor (a step along the same copy)
        self._anchor_start = 0  # history length where the output began following the anchor's copy
        self._synced: Sequence[int] | None = None  # the history list last synced with (a reference)
        self._reply_start: int | None = None  # history length where this request's reply begins (take_in)
        self._home: Anchor | None = None  # the last copy that ran RESYNC_MIN_RUN tokens, while another holds the anchor
        self._home_start = 0  # ...and where the output began following it
        self._last_home = False  # the last draft resumed the home copy
        # (source, position) -> (next position to index, token pair -> positions) around the anchor and home
        self._near: dict[tuple[int, int], tuple[int, dict[tuple[int, int], list[int]]]] = {}
        self._preamble_seen: tuple[tuple[int, ...] | None, bool] = (None, False)  # _opening's last scan

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
            toks = list(tokens)[:MAX_SOURCE_TOKENS]
            self._sources[sid] = toks
            self._index_range(sid, toks, 0)
            self._evict_oldest()
            dead = sum(1 for v in self._index.values() for s, _ in v if s not in self._sources)
            if dead > 4 * len(self._index) + 100_000 or self._evicted > MAX_SOURCE_TOKENS:
                self._rebuild()

    def remove_source(self, key: str) -> None:
        with self._lock:
            sid = self._names.pop(key, None)
            if sid is not None:
                del self._sources[sid]

    def _evict_oldest(self) -> None:
        """Drop the oldest registrations until MAX_SOURCES and MAX_SOURCE_TOKENS hold (the newest stays)."""
        total = sum(len(t) for sid, t in self._sources.items() if sid != HISTORY)
        while len(self._names) > 1 and (len(self._names) > MAX_SOURCES or total > MAX_SOURCE_TOKENS):
            oldest = next(iter(self._names))
            gone = len(self._sources.pop(self._names.pop(oldest)))
            total -= gone
            self._evicted += gone

    @property
    def n_sources(self) -> int:
        return len(self._sources) - 1

    def _rebuild(self) -> None:
        self._index.clear()
        self._evicted = 0
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
        # the decoder passes the same list every pass, only ever appended to: comparing its whole
        # prefix again would cost O(history) a pass
        grown = history is self._synced and len(history) >= n and (not n or history[n - 1] == hist[n - 1])
        if n and not grown and (len(history) < n or history[n - 1] != hist[n - 1] or list(history[:n]) != hist):
            # a different sequence: keep the common prefix (stale entries are filtered on use)
            common = 0
            m = min(n, len(history))
            while common < m and hist[common] == history[common]:
                common += 1
            del hist[common:]
            self._near.clear()
            n = common
        if len(history) > n:
            hist.extend(history[n:])
            # only keys ending at positions >= n have new continuations (they read the old tail);
            # those ending before were indexed when their continuation arrived
            self._index_range(HISTORY, hist, n)
        self._synced = history
        return hist

    # -- Drafter protocol ----------------------------------------------------------------
    def reset(self) -> None:
        with self._lock:
            self._sources[HISTORY] = []
            self._synced = None
            self._anchor = self._last = self._home = None
            self._last_run = self._anchor_start = self._home_start = 0
            self._reply_start = None
            self._near.clear()
            self._preamble_seen = (None, False)

    def take_in(self, history: Sequence[int]) -> None:
        """Index ``history`` now (a prompt, while the target prefills it), so that the request's
        first proposal does not: a new turn's 500-1,600 tokens took 1-20 ms, against 2 ms steps."""
        with self._lock:
            self._sync_history(history)
            self._reply_start = len(history)
            self._preamble_seen = (None, False)  # a new reply: its preamble is another

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        with self._lock:
            hist = self._sync_history(history)
            if max_len <= 0 or not hist:
                return Draft((), self.name)
            self._follow(hist)
            d = self._from_anchor(hist, max_len)
            if d is None:
                d = self._from_index(hist, max_len)
            return d

    # -- following a copy ------------------------------------------------------------------
    # (the history source is ``hist`` itself, so len(src) bounds every source alike)
    def _advance(self, a: Anchor | None, hist: list[int]) -> tuple[Anchor | None, int]:
        """Move an anchor over the output that matched its source since; (anchor, tokens moved)."""
        if a is None:
            return None, 0
        sid, pos, h = a
        src = self._sources.get(sid)
        if src is None or h > len(hist):
            return None, 0  # the source went away, or this is another sequence
        n = 0
        while h + n < len(hist) and pos + n < len(src) and hist[h + n] == src[pos + n]:
            n += 1
        return (sid, pos + n, h + n), n

    def _follow(self, hist: list[int]) -> None:
        last, moved = self._advance(self._last, hist)
        # the output may match a draft whether or not it was verified: a plain pass that
        # emits what the drafter proposed confirms it all the same
        self._last_run = self._last_run + moved if last is not None else 0
        if last is not None and self._last_run >= CONFIRM:
            # the long copy resumed (a home resync, or the index found the place it left): the anchor again
            if self._last_home or self._resumes(self._home, last):
                self._anchor_start, self._home = self._home_start, None
            else:
                a = self._advance(self._anchor, hist)[0]
                ran = a is not None and a[2] - self._anchor_start >= RESYNC_MIN_RUN
                if not (self._last_follows and self._anchor is not None) and not self._resumes(self._anchor, last):
                    if ran:  # a new copy, not a resync of this one: the long one it left stays home
                        self._home, self._home_start = a, self._anchor_start
                    self._anchor_start = last[2] - self._last_run
                elif ran and a is not None and a[0] == last[0] and abs(last[1] - self._last_run - a[1]) > HOME_JUMP:
                    self._home, self._home_start = a, self._anchor_start  # a far resync may have taken new code for the source's
            self._anchor, self._last, self._last_run = last, None, 0
        else:
            self._anchor = self._advance(self._anchor, hist)[0]
            self._last = last

    def _resumes(self, a: Anchor | None, last: Anchor) -> bool:
        """The confirmed place ``last`` starts where a resync around ``a`` would have looked."""
        if a is None or a[0] != last[0]:
            return False
        start = last[1] - self._last_run
        return a[1] - RESYNC_BEHIND <= start <= a[1] + RESYNC_AHEAD

    def _from_anchor(self, hist: list[int], max_len: int) -> Draft | None:
        a = self._anchor
        if a is not None:
            sid, pos, h = a
            if h == len(hist):  # in step with the copy: its continuation, whatever the index says
                return self._draft(sid, pos, hist, max_len, resync=True) if pos < len(self._sources[sid]) else None
            d = self._resync(a, hist, max_len)
            if d is not None:
                return d
        home = self._home  # never the anchor: it is the place the anchor left, at an earlier history length
        if home is None:
            return None
        if home[0] not in self._sources or home[2] > len(hist):
            self._home = None  # the source went away, or this is another sequence
            return None
        return self._resync(home, hist, max_len, home=True)

    def _resync(self, a: Anchor, hist: list[int], max_len: int, home: bool = False) -> Draft | None:
        """The output departed from the copy at ``a``: find its last tokens near where it left (a
        place needs two of them to count at all, so only those are scored: this runs every pass
        until it resumes)."""
        sid, pos, h = a
        src = self._sources[sid]
        if len(hist) < 2:
            return None
        places = self._near_places(sid, pos, src).get((hist[-2], hist[-1]), ())
        scored = ((match_back(src, p, hist, RESYNC_KEY), -abs(p - pos), p) for p in places)
        matched, neg_dist, best = max(scored, key=lambda t: t[:2], default=(0, 0, -1))  # ties: the earlier place
        departed = len(hist) - h  # output tokens since the copy was left
        # two common tokens after a long insertion, or far from the anchor, are no evidence
        need = 2 if departed <= 8 and -neg_dist <= departed + 4 else (HOME_KEY if home else 3)
        if matched < need:
            return None
        return self._draft(sid, best, hist, max_len, resync=True, home=home)

    def _near_places(self, sid: int, pos: int, src: list[int]) -> dict[tuple[int, int], list[int]]:
        """Where each token pair ends around a departed anchor (RESYNC_BEHIND before it to
        RESYNC_AHEAD after): the output stays departed for many passes, and scanning those
        positions again every pass was a fifth of the overlay's host work on a GPU step."""
        key = (sid, pos)
        near = self._near.get(key)
        if near is None:
            keep = {(x[0], x[1]) for x in (self._anchor, self._home) if x is not None}
            for k in [k for k in self._near if k not in keep]:
                del self._near[k]
            near = (max(2, pos - RESYNC_BEHIND), {})
        table = near[1]
        top = min(len(src), pos + RESYNC_AHEAD)  # the history source grows: index what it gained
        for p in range(near[0], top):
            table.setdefault((src[p - 2], src[p - 1]), []).append(p)
        self._near[key] = (max(near[0], top), table)
        return table

    def _draft(self, sid: int, pos: int, hist: list[int], max_len: int, *, resync: bool, matched: int | None = None,
               home: bool = False) -> Draft:
        """Copy src[pos:]; ``resync`` (following the anchor, or ``home``) counts only while the literal
        match is short. ``matched``: the context match when the caller has measured it already."""
        src = self._sources[sid]
        if matched is None:
            matched = match_back(src, pos, hist, MATCH_PROBE)
        n = len(hist)
        if self._last != (sid, pos, n):  # a new place: its confirmation starts over
            self._last, self._last_run, self._last_follows, self._last_home = (sid, pos, n), 0, resync, home
        else:  # the index proposed this place a token ago: the copy resuming here all the same
            self._last_follows, self._last_home = self._last_follows or resync, self._last_home or home
        # following a copy is evidence once the copy has gone on for a while: two tokens that
        # happened to match (in new code, say) are not
        a = self._anchor
        long_copy = home or (a is not None and a[2] - self._anchor_start >= RESYNC_MIN_RUN)
        # a reply that has so far only copied this place (an edit re-emitting its file) is evidence
        # long before the match is: without it the first 30 tokens of every whole-file edit went plain
        said = n - self._reply_start if self._reply_start is not None else -1
        return Draft(tuple(src[pos : pos + max_len]), self.name, confidence=matched,
                     resync=resync and long_copy and matched < RESYNC_MAX_MATCH,
                     opening=self._opening(sid, src, pos, hist, matched, said),
                     echo=sid == HISTORY and self._reply_start is not None and pos > self._reply_start)

    def _opening(self, sid: int, src: list[int], pos: int, hist: list[int], matched: int, said: int) -> bool:
        """The reply so far copies this place, after at most a few tokens the source has just above
        it (a fence line): prose that quotes the prompt after its own first words is no opening copy."""
        if said < OPENING_MIN or matched < OPENING_MIN:
            return False
        pre = said - matched
        if pre <= 0:
            return True
        if pre > OPENING_PREAMBLE:
            return False
        n, start = len(hist), pos - matched
        # the copy's start and the reply's preamble stay put while the copy runs: scan once per copy
        key = (sid, start, n - said, pre)
        if self._preamble_seen[0] != key:
            lead = hist[n - said : n - matched]
            lo = max(0, start - OPENING_LOOKBACK)
            self._preamble_seen = (key, any(src[i : i + pre] == lead for i in range(lo, start - pre + 1)))
        return self._preamble_seen[1]

    def _from_index(self, hist: list[int], max_len: int) -> Draft:
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
            return self._draft(sid, pos, hist, max_len, resync=False, matched=matched)
        return Draft((), self.name)

    def _best(self, hist: list[int], key: tuple[int, ...], cands: list[tuple[int, int]]) -> tuple[int, int, int] | None:
        k = len(key)
        votes: dict[int, int] = {}
        live: list[tuple[int, int, int]] = []
        for sid, pos in cands:
            src = self._sources.get(sid)
            if src is None:
                continue
            if pos >= len(src) or tuple(src[pos - k : pos]) != key:
                continue  # stale, or the current suffix itself (no continuation yet)
            m = match_back(src, pos, hist, MATCH_PROBE)  # how far back does the context agree?
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
