"""Speculation never changes the output distribution (tiny random-weight GGUF, real llama.cpp).

Method: the exact probability of every length-3 continuation is computed from the model
with plain single-token decodes and the same Sampler filters. Then 3000 sequences are
sampled through the real decode loop, once plainly and once per speculative setting
(a deterministic drafter verified by sample-and-match, and a stochastic drafter with its
own q verified by the min(1, p/q) rule), each with its own fixed seed. Each sample set
is compared with the exact distribution by a chi-square goodness-of-fit test (cells
with expected count < 5 pooled). The threshold is the 0.999 quantile, so a correct
implementation fails with probability 0.1% per comparison; with fixed seeds the test is
deterministic. A broken verifier (e.g. accepting every draft) shifts the distribution
by far more than that, which ``test_detects_a_lossy_verifier`` demonstrates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest
from scipy import stats

from engine.decoder import run
from engine.drafters.base import Draft
from engine.policy import CostCurve
from engine.sampling import Sampler
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams, StatsEvent

PROMPT = (1, 5, 7, 4)
LENGTH = 3
N = 3000
SETTINGS = [
    SamplingParams(temperature=1.0),
    SamplingParams(temperature=0.6, top_p=0.9),
    SamplingParams(temperature=0.8, top_k=5, min_p=0.05, repeat_penalty=1.3),
    SamplingParams(temperature=0.6, top_k=5, top_p=0.95, min_p=0.05, temper_last=True),  # llama.cpp's order
]


class CyclingDrafter:
    """Deterministic guesses that are sometimes right and often wrong."""

    name = "cycle"

    def __init__(self, vocab: int) -> None:
        self.vocab = vocab

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        h = sum(history) % self.vocab
        toks = tuple(3 + (h + i * 3) % (self.vocab - 3) for i in range(max_len))
        return Draft(toks, self.name)

    def reset(self) -> None:
        pass


class RandomQDrafter:
    """Stochastic drafts from a fixed, deliberately wrong distribution q."""

    name = "randq"

    def __init__(self, vocab: int, seed: int = 5) -> None:
        rng = np.random.default_rng(seed)
        q = rng.random(vocab) ** 2
        q[:3] = 0.0
        self.q = q / q.sum()
        self.rng = np.random.default_rng(seed + 1)

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        toks = tuple(int(t) for t in self.rng.choice(len(self.q), size=max_len, p=self.q))
        return Draft(toks, self.name, probs=np.tile(self.q, (max_len, 1)))

    def reset(self) -> None:
        pass


def exact_distribution(model, ctx, params: SamplingParams) -> dict[tuple[int, ...], float]:
    """P(sequence) for every continuation of LENGTH tokens (ending early at EOS)."""
    sampler = Sampler(params)
    out: dict[tuple[int, ...], float] = {}

    def walk(prefix: tuple[int, ...], prob: float) -> None:
        if len(prefix) == LENGTH or (prefix and model.is_eog(prefix[-1])):
            seq = prefix[:-1] if prefix and model.is_eog(prefix[-1]) else prefix
            out[seq] = out.get(seq, 0.0) + prob
            return
        ctx.truncate(0)
        logits = ctx.decode(list(PROMPT) + list(prefix), 0, all_logits=False)[-1]
        ids, probs = sampler.distribution(logits, list(PROMPT) + list(prefix))
        for t, p in zip(ids.tolist(), probs.tolist(), strict=True):
            if p > 1e-9:
                walk(prefix + (t,), prob * p)

    walk((), 1.0)
    ctx.truncate(0)
    return out


def sample_sequences(model, ctx, params: SamplingParams, drafter, seed: int, window: int = 3) -> Counter:
    target = Target(ctx)
    target.rollback(0)
    ctx.truncate(0)
    slots = {drafter.name: DrafterSlot(drafter)} if drafter is not None else {}
    spec = SpecConfig(drafters=(drafter.name,) if drafter is not None else (), adaptive=False, fixed_window=window, max_window=window)
    spec_ctr: Counter = Counter()
    curve = CostCurve({1: 1.0, 2: 1.0, 8: 1.0})
    for i in range(N):
        sp = SamplingParams(**{**params.__dict__, "seed": seed * 100_000 + i})
        req = GenerateRequest(PROMPT, max_tokens=LENGTH, sampling=sp)
        done = run(target, model, PROMPT, req, spec, Speculator(curve, slots), lambda _e: None)
        spec_ctr[tuple(done.token_ids)] += 1
    return spec_ctr


def chi2_pvalue(counts: Counter, exact: dict[tuple[int, ...], float]) -> float:
    assert set(counts) <= set(exact), f"impossible sequences sampled: {set(counts) - set(exact)}"
    cells = sorted(exact, key=lambda s: -exact[s])
    obs, exp = [], []
    pool_o = pool_e = 0.0
    for s in cells:
        e = exact[s] * N
        if e >= 5:
            obs.append(counts.get(s, 0))
            exp.append(e)
        else:
            pool_o += counts.get(s, 0)
            pool_e += e
    if pool_e > 0:
        obs.append(pool_o)
        exp.append(pool_e)
    exp_arr = np.array(exp) * (sum(obs) / sum(exp))
    return float(stats.chisquare(obs, exp_arr).pvalue)


@pytest.mark.parametrize("params", SETTINGS, ids=["t1", "t0.6-p0.9", "t0.8-k5-minp-rep", "llama-order"])
def test_speculative_sampling_matches_plain_distribution(tiny, params: SamplingParams) -> None:
    model, ctx = tiny
    exact = exact_distribution(model, ctx, params)
    assert abs(sum(exact.values()) - 1.0) < 1e-6
    p_plain = chi2_pvalue(sample_sequences(model, ctx, params, None, seed=1), exact)
    p_det = chi2_pvalue(sample_sequences(model, ctx, params, CyclingDrafter(model.n_vocab), seed=2), exact)
    p_sto = chi2_pvalue(sample_sequences(model, ctx, params, RandomQDrafter(model.n_vocab), seed=3), exact)
    assert p_plain > 1e-3, p_plain  # the harness itself is sound
    assert p_det > 1e-3, f"sample-and-match changed the distribution (p={p_det:.2e})"
    assert p_sto > 1e-3, f"min(1, p/q) rule changed the distribution (p={p_sto:.2e})"


def test_drafts_are_actually_verified(tiny) -> None:
    """The speculative runs above really draft and really reject (else they prove nothing)."""
    model, ctx = tiny
    target = Target(ctx)
    ctx.truncate(0)
    drafter = CyclingDrafter(model.n_vocab)
    spec = SpecConfig(drafters=("cycle",), adaptive=False, fixed_window=3, max_window=3)
    slots = {"cycle": DrafterSlot(drafter)}
    sp = Speculator(CostCurve({1: 1.0, 8: 1.0}), slots)
    events: list = []
    for i in range(200):
        req = GenerateRequest(PROMPT, max_tokens=LENGTH, sampling=SamplingParams(temperature=1.0, seed=i))
        run(target, model, PROMPT, req, spec, sp, events.append)
    slot = slots["cycle"]
    assert slot.drafted > 300
    assert 0 < slot.accepted < slot.drafted
    snapshots = [e.stats for e in events if isinstance(e, StatsEvent)]
    assert snapshots and all(s.tau >= 1.0 for s in snapshots if s.completion_tokens)


def test_detects_a_lossy_verifier(tiny, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same statistics catch a verifier that accepts every draft."""
    import engine.decoder as dec
    from engine.verify import Verdict

    def accept_all(rows, draft, sampler, history, q=None, pool=None):
        return Verdict(len(draft), sampler.sample(rows[len(draft)], list(history) + list(draft)))

    monkeypatch.setattr(dec, "verify", accept_all)
    model, ctx = tiny
    params = SETTINGS[0]
    exact = exact_distribution(model, ctx, params)
    p = chi2_pvalue(sample_sequences(model, ctx, params, CyclingDrafter(model.n_vocab), seed=4), exact)
    assert p < 1e-6


def test_exact_distribution_covers_all_sequences(tiny) -> None:
    model, ctx = tiny
    exact = exact_distribution(model, ctx, SamplingParams(temperature=0.8, top_k=5))
    # top-k 5 of 3 steps: at most 5**3 full sequences plus early endings
    assert 1 < len(exact) <= 5**3 + 5**2 + 5 + 1
    assert all(len(s) <= LENGTH for s in exact)
