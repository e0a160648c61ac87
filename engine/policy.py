"""The adaptive window: how many drafted tokens to verify in the next pass (0 = plain decode).

Throughput ~ E[tokens emitted] / (verify cost + draft cost). The policy knows the
verify-cost curve (seconds for n rows, measured once and refined online) and each
drafter's acceptance by draft position (learned online, per evidence bucket), and picks
the window that maximizes expected tokens per second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

MAX_WINDOW = 64
# Each later position's estimate shrinks towards the rate pooled over all of them with this
# many passes of weight: along a copy the chance of a break barely depends on the position, and
# one break at a position that short windows never reach again must not close every window past it.
POSITION_WEIGHT = 16.0
# Speculate only when the estimate beats plain decode by this much: acceptance estimates
# are noisy and a pass that loses costs for sure, so marginal windows are not worth it.
SPECULATE_MARGIN = 0.10
# single-row steps after a pass of another size that pay for its change of shape (a CUDA
# build: one runs without llama.cpp's captured graph, the next captures it again)
FOLLOWING_STEPS = 2


class CostCurve:
    """Seconds to verify n rows (n = 1 + drafted tokens): a measured shape times a live scale.

    The machine's speed drifts (a shared host's memory traffic, thermal limits) while the
    shape - what n rows cost relative to one - is a property of the kernels. So every
    observed pass moves the scale quickly and the observed point's shape slowly. Refining
    points independently would let frequent single-row passes on a slowed-down machine
    make every window look cheap relative to them.
    """

    SCALE_ALPHA = 0.1  # how fast the whole curve follows the machine's speed
    SHAPE_ALPHA = 0.1  # how fast one point's relative cost follows what it is observed to cost

    def __init__(self, seconds: dict[int, float]) -> None:
        if 1 not in seconds or seconds[1] <= 0:
            raise ValueError("the cost curve needs a positive n=1")
        base = seconds[1]
        self._rel = {n: v / base for n, v in sorted(seconds.items())}
        self._scale = base
        self._table: list[float] = []  # relative cost by n (interpolated), rebuilt when the shape moves
        self._floor: list[float] = []  # suffix minima of the table, rebuilt with it

    @property
    def points(self) -> dict[int, float]:
        return {n: r * self._scale for n, r in self._rel.items()}

    def _relative(self, n: int) -> float:
        pts = self._rel
        if n in pts:
            return pts[n]
        xs = list(pts)
        if n > xs[-1]:
            if len(xs) == 1:
                return pts[xs[0]] * n
            a, b = xs[-2], xs[-1]
            slope = (pts[b] - pts[a]) / (b - a)
            return pts[b] + slope * (n - b)
        lo = max(x for x in xs if x < n)
        hi = min(x for x in xs if x > n)
        f = (n - lo) / (hi - lo)
        return pts[lo] * (1 - f) + pts[hi] * f

    def cost(self, n: int) -> float:
        return self._scale * self.relative(n)

    def relative(self, n: int) -> float:
        """n rows over one row. The policy asks this for every window of every pass, so the
        interpolation is tabled (on a GPU a pass takes about 2 ms and the policy must not eat it)."""
        t = self.table()
        return t[n] if n < len(t) else self._relative(n)

    @property
    def scale(self) -> float:
        """Seconds of one row now."""
        return self._scale

    def table(self) -> list[float]:
        """Relative costs by n for n up to MAX_WINDOW + 1 (index 0 unused); do not modify."""
        t = self._table
        if not t:
            t = self._table = [0.0] + [self._relative(i) for i in range(1, MAX_WINDOW + 2)]
        return t

    def floor(self) -> list[float]:
        """floor()[n]: the least relative cost of any n' >= n in the table (bounds what a wider
        window can cost, so the window choice can stop early)."""
        f = self._floor
        if not f:
            t = self.table()
            f = list(t)
            for n in range(len(f) - 2, 0, -1):
                f[n] = min(f[n], f[n + 1])
            self._floor = f
        return f

    def _retable(self, n: int) -> None:
        """Redo the table where point n's move shows: between its neighbours, and past the
        last point when n is one of the two the extrapolation runs through."""
        t = self._table
        self._floor = []
        if not t:
            return
        xs = list(self._rel)
        i = xs.index(n)
        hi = len(t) if i >= len(xs) - 2 else min(xs[i + 1], len(t))
        for m in range(xs[i - 1] + 1, hi):
            t[m] = self._relative(m)

    def observe(self, n: int, seconds: float) -> None:
        if seconds <= 0:
            return
        err = seconds / self.cost(n)
        self._scale *= 1 + self.SCALE_ALPHA * (err - 1)
        if n != 1:  # n = 1 is the unit the shape is measured in
            rel = self._relative(n)
            self._rel[n] = rel * (1 + self.SHAPE_ALPHA * (err - 1))
            self._rel = dict(sorted(self._rel.items()))
            self._retable(n)


RESYNC_BUCKET = 6  # n-gram drafts that pick a copy up again right after the output changed it
TOP_BUCKET = 5  # the longest context matches
REGIME_STRIDE = 10  # buckets apart by where a reply is (engine.speculator): bucket + k * REGIME_STRIDE
OPENING_BUCKET = 7  # n-gram drafts continuing the one place the whole reply has copied so far
OPENING_MATCH = 32  # ...until the match alone puts them in the top bucket
ECHO = 2 * REGIME_STRIDE  # the regime of drafts continuing the reply's own earlier text (new code repeating itself)


def confidence_bucket(confidence: int, resync: bool = False, opening: bool = False) -> int:
    """Group drafter evidence (n-gram: tokens of context matched) into a few buckets."""
    if resync:
        return RESYNC_BUCKET
    if opening and confidence < OPENING_MATCH:
        return OPENING_BUCKET
    if confidence <= 0:
        return 0
    return min(TOP_BUCKET, int(math.log2(confidence)))


@dataclass
class _Counts:
    reached: list[float] = field(default_factory=lambda: [0.0] * MAX_WINDOW)
    accepted: list[float] = field(default_factory=lambda: [0.0] * MAX_WINDOW)
    depth: int = 0  # positions ever reached: the rest are 0 and need no decay


class Acceptance:
    """P(draft position i accepted | positions < i accepted), per drafter and bucket.

    Position 0 learns alone, shrunk towards the bucket's prior. Every later position shrinks
    towards the rate pooled over all of them (itself shrunk towards the prior): a constant
    chance of a break per token, which fits a copy (an edit breaks it where the file changes, not
    at a position of the draft), with each position's own evidence moving it only once there is
    much of it. Estimates by position alone trapped windows: a copy that once broke at position
    8 read 0.67 there, short windows never reached position 8 again, and every window stayed
    at 3 drafts along a file's unchanged half. Old evidence decays so the estimate tracks the
    workload.
    """

    # Before any evidence: longer context matches are likelier to continue (n-gram buckets
    # 1..5); bucket 0 is a drafter without such evidence (draft model, MTP); 6 is a resync, 7 an
    # opening copy.
    # A bucket plus a multiple of REGIME_STRIDE is the same evidence in another regime: same prior,
    # unless REGIME_PRIORS has that bucket. A 16-31-token match of the reply's own text continued
    # at 0.91-0.96 a position over 30 recorded new-code replies (MEASUREMENTS, thirty-ninth round):
    # on a steep CPU curve 0.85 opened no window, and a repeated block went by plain until its
    # match reached 32 tokens.
    BUCKET_PRIORS = {0: 0.6, 1: 0.3, 2: 0.45, 3: 0.65, 4: 0.85, 5: 0.95, RESYNC_BUCKET: 0.7, OPENING_BUCKET: 0.95}
    REGIME_PRIORS = {ECHO + 4: 0.9}

    def __init__(self, prior: float | None = None, prior_weight: float = 2.0, decay: float = 0.995,
                 position_weight: float = POSITION_WEIGHT) -> None:
        self.prior = prior  # None: BUCKET_PRIORS
        self.prior_weight = prior_weight
        self.position_weight = position_weight  # 0: each position by its own evidence alone
        self.decay = decay
        self._c: dict[tuple[str, int], _Counts] = {}
        self._cache: dict[tuple[str, int], dict[int, list[float]]] = {}  # rates() by key, then n

    def rates(self, drafter: str, bucket: int, n: int) -> list[float]:
        """Estimates for positions 0..n-1 (the caller must not modify the list: it is cached until
        the key's evidence changes, since the policy asks every pass and evidence moves rarely)."""
        n = min(n, MAX_WINDOW)
        by_n = self._cache.setdefault((drafter, bucket), {})
        hit = by_n.get(n)
        if hit is None:
            hit = by_n[n] = self._rates(self._c.get((drafter, bucket)), bucket, n)
        return hit

    def _rates(self, c: _Counts | None, bucket: int, n: int) -> list[float]:
        prior = self.prior if self.prior is not None else self.REGIME_PRIORS.get(
            bucket, self.BUCKET_PRIORS.get(bucket % REGIME_STRIDE, 0.5))
        if c is None or n <= 0:
            return [prior] * n
        w = self.prior_weight
        reached, accepted = c.reached, c.accepted
        # position 0 (the draft's first token, where a short match is most often wrong) apart
        first = (accepted[0] + w * prior) / (reached[0] + w) if reached[0] + w > 0 else prior
        # the later positions' pooled rate, shrunk towards the bucket's prior
        r, a = sum(reached[1 : c.depth]), sum(accepted[1 : c.depth])  # past depth: never reached
        pooled = (a + w * prior) / (r + w) if r + w > 0 else prior
        s = self.position_weight
        return [first] + [(accepted[i] + s * pooled) / (reached[i] + s) if reached[i] + s > 0 else pooled
                          for i in range(1, n)]

    def update(self, drafter: str, bucket: int, drafted: int, accepted: int, start: int = 0) -> None:
        """One draft's outcome; positions before ``start`` were recorded by an earlier update."""
        c = self._c.setdefault((drafter, bucket), _Counts())
        self._cache.pop((drafter, bucket), None)  # only this key's counts move
        d = self.decay
        reached, acc = c.reached, c.accepted
        for i in range(c.depth):  # a shadow settles every pass or two on new code: decay only what holds counts
            reached[i] *= d
            acc[i] *= d
        # positions after the first rejection were never reached: counting them would
        # make the conditional rates decay with position and shrink every window
        top = min(drafted, accepted + 1, MAX_WINDOW)
        for i in range(start, top):
            reached[i] += 1
            if i < accepted:
                acc[i] += 1
        c.depth = max(c.depth, top)

    def discount(self, prefix: str, factor: float) -> None:
        """Weigh the evidence of keys starting with ``prefix`` by ``factor`` (a new request: what a
        model drafter accepted on the last workload says less about this one)."""
        self._cache.clear()
        for (name, _), c in self._c.items():
            if name.startswith(prefix):
                c.reached = [r * factor for r in c.reached]
                c.accepted = [a * factor for a in c.accepted]

    def by_position(self, drafter: str | None = None) -> list[float]:
        """Pooled acceptance by position (for stats), over all buckets of a drafter or all."""
        reached = [0.0] * MAX_WINDOW
        acc = [0.0] * MAX_WINDOW
        for (name, _), c in self._c.items():
            if drafter is None or name == drafter:
                for i in range(MAX_WINDOW):
                    reached[i] += c.reached[i]
                    acc[i] += c.accepted[i]
        return [a / r for a, r in zip(acc, reached, strict=False) if r > 0]


def expected_tokens(rates: list[float], k: int) -> float:
    """Expected tokens emitted by one pass verifying k drafted tokens: 1 + sum_j prod_{i<=j} a_i."""
    e, run = 1.0, 1.0
    for i in range(k):
        run *= rates[i]
        e += run
    return e


@dataclass(frozen=True)
class Choice:
    k: int
    gain: float  # expected tokens/s relative to plain decode


def choose_window(
    curve: CostCurve, rates: list[float], max_k: int, draft_cost: float = 0.0, margin: float = SPECULATE_MARGIN,
    fixed_cost: float = 0.0,
) -> Choice:
    """Best k in 0..max_k (0 unless it beats plain by ``margin``). draft_cost: seconds per drafted
    token; fixed_cost: seconds the pass pays whatever k (a model drafter catching up with the history)."""
    # in units of one row (the scale cancels): the loop runs for every window of every pass
    scale = curve.scale
    rel = curve.table()
    n_top = min(max_k, len(rates))
    floor = curve.floor()
    early = n_top + 2 < len(rel)  # past the table (a window beyond MAX_WINDOW) there is no floor
    if not early:
        rel = rel + [curve.relative(n) for n in range(len(rel), n_top + 2)]
    per = draft_cost / scale
    fixed = fixed_cost / scale
    unit = rel[1]
    bar = 1.0 + margin  # a window must beat this, and then the best so far
    best_k, best = 0, 1.0
    e, run = 1.0, 1.0  # expected_tokens(rates, k), kept as k grows
    for k in range(1, n_top + 1):
        run *= rates[k - 1]
        e += run
        gain = e * unit / (rel[k + 1] + k * per + fixed)
        if gain > best:
            best_k, best = k, gain
        # rates are at most 1: no wider window expects more than e + run per extra token, nor
        # costs less than the table's floor beyond k + 1, so once that cannot win, stop
        if early and (e + run * (n_top - k)) * unit * (1.0 + 1e-12) <= max(bar, best) * (floor[k + 2] + (k + 1) * per + fixed):
            break
    return Choice(best_k, best) if best > bar else Choice(0, 1.0)


OPTIMISTIC_RATE = 0.9  # a costly drafter is worth asking only if it would pay at this acceptance


def can_pay(curve: CostCurve, cost_per_token: float, max_k: int, rate: float = OPTIMISTIC_RATE) -> bool:
    """Would a drafter costing ``cost_per_token`` seconds a drafted token beat plain decoding on
    ``curve`` with some window of at most ``max_k``, were its drafts accepted at ``rate``?"""
    return choose_window(curve, [rate] * max_k, max_k, cost_per_token).k > 0


Pending = tuple[int, float, int]  # (rows, seconds so far, following steps still to charge)


def observe_pass(curve: CostCurve, n: int, seconds: float, pending: Pending | None) -> Pending | None:
    """Feed one pass's time to the curve; returns the pass now waiting, if any.

    A verify pass is charged what it makes the FOLLOWING_STEPS single-row steps after it pay
    beyond the curve's single step, and those steps then say nothing about the single-row
    cost. On a CUDA build llama.cpp replays a captured graph for repeated single-token steps;
    after a pass of another size the first step runs without the graph and the second captures
    it again (a traced H200 run: 4.2 and 4.0 ms after a 20-row pass, against 1.85 ms steps).
    Without this the penalty would land on the plain steps and every window would look cheap.
    The charge is not clamped at zero, so on a CPU, where there is no penalty, it is noise
    around nothing.
    """
    if pending is not None:
        rows, spent, left = pending
        if n == 1:
            spent += seconds - curve.cost(1)
            if left > 1:
                return rows, spent, left - 1
            curve.observe(rows, spent)
            return None
        curve.observe(rows, spent)
    if n > 1:
        return n, seconds, FOLLOWING_STEPS
    curve.observe(1, seconds)
    return None
