"""The decode loop replayed in virtual time against a recorded output, to judge the policy.

A timed run mixes what the policy decides with the machine's drift. Replaying the loop
against the tokens plain decoding produced (its argmax path when greedy; one realized
sample path when sampled, on which a deterministic draft is accepted exactly when it
matches) with every pass charged what the verify-cost curve says n rows cost, gives the
policy's speedup without noise. The same recorded output also bounds what any policy
could get from a drafter: :func:`ceiling` knows, at every position, how many of the
drafter's proposed tokens the output goes on to match, and picks the fastest sequence of
plain and verify passes by dynamic programming.

What it leaves out: the drafter's and sampler's own time (the n-gram lookup is ~0.05 ms a
pass), and that batched kernels may round a near-tie the other way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.decoder import run
from engine.drafters.base import Drafter
from engine.drafters.ngram import NgramDrafter
from engine.policy import CostCurve
from engine.slot import DrafterSlot
from engine.spec import DEFAULT_MAX_WINDOW, SpecConfig
from engine.speculator import Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams
from engine.widths import padded_curve, rows_for

ONE_HOT_LOGIT = 30.0  # the recorded token's logit (every other token: 0), so p(token) ~ 1


class VirtualClock:
    """The loop's clock: only OracleContext moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class OracleContext:
    """A target context whose logits put (almost) all mass on the recorded output; each
    decode call after the prompt advances the clock by what the curve says it costs."""

    def __init__(self, prompt: Sequence[int], output: Sequence[int], n_vocab: int, curve: CostCurve, clock: VirtualClock,
                 prefill_s_per_token: float = 0.0) -> None:
        self.prompt, self.output = list(prompt), list(output)
        self.n_vocab, self.curve, self.clock = n_vocab, curve, clock
        self.n_ctx = len(prompt) + len(output) + 64
        self.prefill_s_per_token = prefill_s_per_token  # the prompt's cost (0: not what is compared)
        self.pad_table: tuple[int, ...] = ()  # as backend.Context's: a verify pass is charged its padded rows
        self._rows = np.zeros((0, n_vocab), np.float32)  # the submitted step's (submit / collect)

    def padded(self, n: int) -> int:
        return rows_for(n, self.pad_table)

    def decode(self, tokens: Sequence[int], pos: int, *, all_logits: bool) -> np.ndarray:
        n = len(tokens)
        if pos + n > len(self.prompt):  # decode passes
            self.clock.now += self.curve.cost(self.padded(n) if all_logits else n)
        else:
            self.clock.now += n * self.prefill_s_per_token
        first = 0 if all_logits else n - 1
        rows = np.zeros((n - first, self.n_vocab), np.float32)
        for j in range(first, n):
            i = pos + j + 1 - len(self.prompt)  # the output token this row predicts
            if 0 <= i < len(self.output):
                rows[j - first, self.output[i]] = ONE_HOT_LOGIT
        return rows

    def submit(self, token: int, pos: int) -> None:  # a started plain step (decoder.Target.overlap)
        self._rows = self.decode([token], pos, all_logits=False)

    def collect(self) -> np.ndarray:
        return self._rows

    def truncate(self, n_keep: int) -> None:
        pass


@dataclass(frozen=True)
class _Tokens:
    eog: int | None = None  # the token that ended the recorded reply (None: it ran to its length)

    def piece(self, token: int) -> bytes:
        return b""

    def is_eog(self, token: int) -> bool:
        return token == self.eog


@dataclass(frozen=True)
class SimResult:
    plain_s: float  # the output's length in single-row passes, under the curve
    spec_s: float  # the policy's passes, under the curve
    tau: float
    drafted: int
    accepted: int

    @property
    def speedup(self) -> float:
        return self.plain_s / self.spec_s if self.spec_s else 1.0  # one-token outputs: no decode passes


def simulate(
    prompt: Sequence[int],
    output: Sequence[int],
    curve_points: dict[int, float],
    *,
    spec: SpecConfig | None = None,
    drafter: Callable[[], Drafter] = NgramDrafter,
    mode: str = "greedy",
    n_vocab: int | None = None,
    speculator: Speculator | None = None,
    pad_table: tuple[int, ...] = (),
    overlap: bool = False,
    eog: int | None = None,
    max_tokens: int = 0,
) -> SimResult:
    """The shipped loop and policy against ``output``: fresh acceptance, as a bench run, unless
    ``speculator`` carries what earlier requests taught it (a long-running engine). ``pad_table``:
    verify passes padded as engine.widths pads them (the policy then sees the padded curve);
    ``overlap``: plain steps started before the pick, as on a GPU (decoder.Target.overlap);
    ``eog``: the end-of-generation token the reply ended with, and ``max_tokens`` the request's
    limit (the loop then sees what a run sees: drafts may run past the reply's end)."""
    if not output:
        raise ValueError("nothing to replay")
    clock = VirtualClock()
    ended = list(output) + ([eog] if eog is not None else [])
    vocab = n_vocab or max(list(prompt) + ended) + 1
    ctx = OracleContext(prompt, ended, vocab, CostCurve(dict(curve_points)), clock)
    ctx.pad_table = pad_table
    if speculator is None:
        d = drafter()
        # the policy's own curve (refined online, as in a run) apart from the one passes are charged by
        speculator = Speculator(CostCurve(padded_curve(curve_points, pad_table)), {d.name: DrafterSlot(d, lookup=True)})
    spec = spec or SpecConfig(drafters=tuple(speculator.slots))
    sampling = SamplingParams(temperature=0.0) if mode == "greedy" else SamplingParams(temperature=0.6, top_p=0.95, seed=1)
    limit = max(max_tokens, len(output) + 1) if eog is not None else len(output)
    req = GenerateRequest(tuple(prompt), max_tokens=limit, sampling=sampling)
    done = run(Target(ctx, overlap=overlap), _Tokens(eog), prompt, req, spec, speculator, lambda _e: None, clock=clock)
    if list(done.token_ids) != list(output):
        raise RuntimeError("the replay left the recorded output")  # would mean speculation changed it
    st = done.stats
    # the first token comes from the prefill, in a timed run as here: n - 1 decode passes (the end token's too)
    return SimResult((len(ended) - 1) * ctx.curve.cost(1), st.decode_s, st.tau,
                     sum(st.drafted.values()), sum(st.accepted.values()))


@dataclass(frozen=True)
class Served:
    """One recorded request of a long run (``eog``, ``max_tokens``: as ``simulate`` takes them)."""

    prompt: Sequence[int]
    output: Sequence[int]
    mode: str = "greedy"
    eog: int | None = None
    max_tokens: int = 0


def simulate_served(requests: Sequence[Served], curve_points: dict[int, float], *,
                    spec: SpecConfig | None = None, pad_table: tuple[int, ...] = (),
                    overlap: bool = False) -> list[SimResult]:
    """Requests in a row through one speculator and overlay, as one engine serves them: each
    request's speedup over plain after what the ones before taught it."""
    d = NgramDrafter()
    speculator = Speculator(CostCurve(padded_curve(curve_points, pad_table)), {d.name: DrafterSlot(d, lookup=True)})
    return [simulate(r.prompt, r.output, curve_points, spec=spec, mode=r.mode, speculator=speculator,
                     pad_table=pad_table, overlap=overlap, eog=r.eog, max_tokens=r.max_tokens)
            for r in requests if r.output]


def matches(prompt: Sequence[int], output: Sequence[int], drafter: Drafter, max_len: int) -> list[int]:
    """At each output position: how many of the drafter's proposed tokens the output matches."""
    hist = list(prompt)
    out: list[int] = []
    for i in range(len(output)):
        d = drafter.propose(hist, max_len)
        m = 0
        while m < len(d.tokens) and i + m < len(output) and d.tokens[m] == output[i + m]:
            m += 1
        out.append(m)
        hist.append(output[i])
    return out


def ceiling(prompt: Sequence[int], output: Sequence[int], curve_points: dict[int, float], *,
            drafter: Callable[[], Drafter] = NgramDrafter, max_len: int = DEFAULT_MAX_WINDOW) -> tuple[float, float]:
    """(plain seconds, best seconds): the fastest any window policy could emit this output
    with ``drafter``'s proposals: at each position either a plain pass, or a pass verifying
    exactly the proposed tokens that the output will match. It sees the drafter proposing at
    every position, so it bounds a policy using the same drafter's proposals, not a drafter
    whose state (the copy it follows) another sequence of passes would have changed."""
    return ceiling_of(matches(prompt, output, drafter(), max_len), curve_points, max_len=max_len)


def ceiling_of(ms: Sequence[int], curve_points: dict[int, float], *, max_len: int = DEFAULT_MAX_WINDOW,
               rows_per_token: int = 1) -> tuple[float, float]:
    """:func:`ceiling` for given match lengths (``ms[i]``: draft tokens the output matches at
    position i). ``rows_per_token``: verify rows each drafted token takes (2: two candidates)."""
    curve = CostCurve(dict(curve_points))
    n = len(ms)
    # a pass that will accept m tokens costs at least the cheapest window of m or more (CPU
    # curves are not monotone: 9 rows may cost less than 8)
    cheapest = [curve.cost(rows_per_token * k + 1) for k in range(max_len + 1)]
    for k in range(max_len - 1, -1, -1):
        cheapest[k] = min(cheapest[k], cheapest[k + 1])
    best = [0.0] * (n + 1)  # best[i]: least time to emit output[i:] (output[0] comes from the prefill)
    for i in range(n - 1, 0, -1):
        t = curve.cost(1) + best[i + 1]
        if ms[i]:
            t = min(t, cheapest[ms[i]] + best[min(n, i + ms[i] + 1)])
        best[i] = t
    return (n - 1) * curve.cost(1), best[1] if n > 1 else 0.0
