from __future__ import annotations

import numpy as np
import pytest

from engine.sampling import Sampler
from engine.types import SamplingParams


def reference(logits: np.ndarray, p: SamplingParams, history: list[int]) -> dict[int, float]:
    """The chain by sorting: top-k, top-p over the softmax of what top-k kept, min-p, on logits tempered first
    (tau's order) or at temperature 1 (``temper_last``: llama.cpp's common/sampling.cpp order); the kept
    tokens weighed by the tempered softmax either way."""
    x = logits.astype(np.float64).copy()
    if p.repeat_penalty != 1.0:
        for t in set(history[-p.repeat_last_n :]):
            x[t] = x[t] / p.repeat_penalty if x[t] > 0 else x[t] * p.repeat_penalty
    xf = x if p.temper_last else x / p.temperature
    order = np.argsort(-xf, kind="stable")
    if p.top_k:
        order = order[: p.top_k]
    w = np.exp(xf[order] - xf[order].max())
    probs = w / w.sum()
    if p.top_p < 1.0:
        cut = int(np.searchsorted(np.cumsum(probs), p.top_p)) + 1
        order, probs = order[:cut], probs[:cut]
    if p.min_p > 0:
        order = order[probs >= p.min_p * probs.max()]
    w = np.exp((x[order] - x[order].max()) / p.temperature)
    return dict(zip(order.tolist(), (w / w.sum()).tolist(), strict=True))


LLAMA_ORDER = [
    SamplingParams(temperature=0.6, top_k=40, top_p=0.95, min_p=0.05, temper_last=True),  # llama-server's defaults
    SamplingParams(temperature=0.6, top_p=0.95, temper_last=True),
    SamplingParams(temperature=0.8, top_p=0.9, repeat_penalty=1.3, temper_last=True),
    SamplingParams(temperature=1.5, min_p=0.01, temper_last=True),
    SamplingParams(temperature=0.6, temper_last=True),  # no filter: the tempered softmax either way
]


def test_temper_last_keeps_a_wider_nucleus_than_tempering_first() -> None:
    # why the order matters: at T < 1 tempering first sharpens the softmax top-p reads
    logits = np.log(np.array([0.6, 0.25, 0.1, 0.05], dtype=np.float32))
    first = Sampler(SamplingParams(temperature=0.6, top_p=0.9)).distribution(logits, [])[0]
    last = Sampler(SamplingParams(temperature=0.6, top_p=0.9, temper_last=True)).distribution(logits, [])[0]
    assert sorted(first.tolist()) == [0, 1]
    assert sorted(last.tolist()) == [0, 1, 2]


def test_a_row_min_p_keeps_alone_skips_top_k(monkeypatch) -> None:
    # llama-server's top-k 40 would partition all 152k logits on every row; min-p decides a confident one first
    params = SamplingParams(temperature=0.6, top_k=40, top_p=0.95, min_p=0.05, temper_last=True, seed=3)
    rows = _vocab_rows()
    monkeypatch.setattr(np, "argpartition", lambda *a, **k: pytest.fail("top-k partitioned the row"))
    ids, probs = Sampler(params).distribution(rows["confident"], [])
    assert ids.tolist() == [7] and probs.tolist() == [1.0]
    assert Sampler(params).sample_draft(rows["confident"], [], 7) == 7
    with pytest.raises(pytest.fail.Exception):
        Sampler(params).distribution(rows["spread"], [])  # forty likely tokens: min-p keeps several, top-k runs


@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(temperature=0.6, top_p=0.95),
        SamplingParams(temperature=1.0),
        SamplingParams(temperature=0.7, top_k=40, top_p=0.9),
        SamplingParams(temperature=0.6, min_p=0.05),
        SamplingParams(temperature=0.8, repeat_penalty=1.3, top_p=0.99),
        SamplingParams(temperature=1.5, top_p=0.5),
        SamplingParams(temperature=1.0, min_p=1e-6),  # a min-p below the nucleus search's first cut
        *LLAMA_ORDER,
    ],
)
@pytest.mark.parametrize("peaky", [True, False])
def test_distribution_matches_reference(params: SamplingParams, peaky: bool) -> None:
    rng = np.random.default_rng(7)
    logits = (rng.standard_normal(5000) * 2).astype(np.float32)
    if peaky:
        logits[:6] += 12
    history = [1, 2, 3, 4, 5, 100, 200]
    ids, probs = Sampler(params).distribution(logits, history)
    ref = reference(logits, params, history)
    got = dict(zip(ids.tolist(), probs.tolist(), strict=True))
    assert set(got) == set(ref)
    assert max(abs(got[t] - ref[t]) for t in ref) < 1e-5
    assert abs(sum(got.values()) - 1) < 1e-9


def test_greedy_is_argmax_after_penalty() -> None:
    logits = np.array([1.0, 5.0, 4.9, 0.0], dtype=np.float32)
    s = Sampler(SamplingParams(temperature=0.0, repeat_penalty=1.5))
    assert s.sample(logits, []) == 1
    assert s.sample(logits, [1]) == 2  # 5/1.5 < 4.9


def test_sampling_is_seeded_and_follows_probabilities() -> None:
    logits = np.log(np.array([0.5, 0.3, 0.2], dtype=np.float32))
    a = [Sampler(SamplingParams(temperature=1.0, seed=3)).sample(logits, []) for _ in range(3)]
    b = [Sampler(SamplingParams(temperature=1.0, seed=3)).sample(logits, []) for _ in range(3)]
    assert a == b
    s = Sampler(SamplingParams(temperature=1.0, seed=1))
    counts = np.bincount([s.sample(logits, []) for _ in range(6000)], minlength=3) / 6000
    assert np.allclose(counts, [0.5, 0.3, 0.2], atol=0.03)


def test_dense_is_the_same_distribution() -> None:
    rng = np.random.default_rng(1)
    logits = rng.standard_normal(300).astype(np.float32) * 3
    s = Sampler(SamplingParams(temperature=0.6, top_p=0.9))
    ids, probs = s.distribution(logits, [])
    dense = s.dense(logits, [])
    assert np.allclose(dense[ids], probs)
    assert abs(dense.sum() - 1) < 1e-9


def _vocab_rows() -> dict[str, np.ndarray]:
    """152k-token rows shaped like a code model's: a bulk around 0 and a few likely tokens."""
    rng = np.random.default_rng(3)
    rows = {}
    for name, bumps in (("confident", [25.0]), ("two-way", [17.0, 16.5]), ("three-way", [15.0, 14.6, 14.1]),
                        ("spread", list(rng.uniform(10, 14, 40)))):
        x = (rng.standard_normal(151936) * 2.5).astype(np.float32)
        for i, b in enumerate(bumps):
            x[7 + 13 * i] += np.float32(b)
        rows[name] = x
    # a row whose nucleus ends within a hair of top_p: the bounds cannot decide it
    x = np.full(151936, -40.0, dtype=np.float32)
    x[1], x[2] = 0.0, np.float32(-0.6 * np.log(0.95 / 0.05 + 2e-3))  # p(1) = 0.95 + 5e-6
    rows["at-the-edge"] = x
    # a top whose runners-up weigh 1e-6 and 3e-5 of it: too heavy for the count-free test, decided by the second's bound
    x = (rng.standard_normal(151936) * 2.5 - 10.0).astype(np.float32)
    x[7], x[20], x[33] = 30.0, np.float32(30.0 + 0.6 * np.log(1e-6)), np.float32(30.0 + 0.6 * np.log(3e-5))
    rows["runners-up"] = x
    # sixty runners-up at 1e-3 each: the top holds 0.943 of the mass, short of top_p, and the bound must say so
    x = np.full(151936, -40.0, dtype=np.float32)
    x[7] = 0.0
    x[100:160] = np.float32(0.6 * np.log(1e-3))
    rows["crowd"] = x
    return rows


@pytest.mark.parametrize("params", [
    SamplingParams(temperature=0.6, top_p=0.95),
    SamplingParams(temperature=0.6, top_p=0.95, min_p=0.05),
    SamplingParams(temperature=1.0, top_p=0.8),
    SamplingParams(temperature=0.6, min_p=0.02),
    *LLAMA_ORDER[:2],
])
def test_the_cheap_pass_is_exact_on_a_full_vocabulary(params: SamplingParams) -> None:
    for name, x in _vocab_rows().items():
        ids, probs = Sampler(params).distribution(x, [])
        ref = reference(x, params, [])
        got = dict(zip(ids.tolist(), probs.tolist(), strict=True))
        assert set(got) == set(ref), name
        assert max(abs(got[t] - ref[t]) for t in ref) < 1e-6, name


def test_a_confident_row_is_decided_without_the_full_pass() -> None:
    # what makes sampled verification cheap: copy runs are confident rows, decided from a
    # handful of gathered tokens and three counts
    s = Sampler(SamplingParams(temperature=0.6, top_p=0.95))
    rows = _vocab_rows()
    for name in ("confident", "two-way", "three-way"):
        found = s._candidates(rows[name])
        assert found is not None and len(found[0]) <= 3, name
        assert name != "confident" or list(found[0]) == [int(rows[name].argmax())]
    assert s._candidates(rows["at-the-edge"]) is None  # within the bounds' width of top_p: the full pass decides


@pytest.mark.parametrize("params", [
    SamplingParams(temperature=0.6, top_p=0.95, seed=5),
    SamplingParams(temperature=0.6, top_p=0.95, min_p=0.05, seed=5),
    SamplingParams(temperature=0.8, top_p=0.9, repeat_penalty=1.3, seed=5),
    SamplingParams(temperature=0.7, top_k=40, top_p=0.9, seed=5),
    SamplingParams(temperature=1.0, seed=5),  # no top-p: every token can be drawn
    SamplingParams(temperature=0.6, top_p=0.99, seed=5),  # top-p past what a confident row holds
    SamplingParams(temperature=0.0, seed=5),
    SamplingParams(temperature=0.6, top_k=40, top_p=0.95, min_p=0.05, seed=5),
    SamplingParams(temperature=0.6, top_k=40, top_p=0.95, min_p=0.05, temper_last=True, seed=5),
    SamplingParams(temperature=0.6, top_p=0.95, temper_last=True, seed=5),
])
def test_a_drafted_rows_sample_is_samples_own_draw_for_draw(params: SamplingParams) -> None:
    rows = _vocab_rows()
    tie = np.full(151936, -30.0, dtype=np.float32)
    tie[3] = tie[9] = 20.0  # a tie at the top: argmax's first index, never the draft's later one
    rows["tie"] = tie
    history = [7, 20, 33]
    seq, fast = Sampler(params), Sampler(params)
    for name, x in rows.items():
        for draft in (7, 20, int(x.argmax()), 9, 0, 151935):
            for _ in range(3):
                a = seq.sample(x, history)
                b = fast.sample_draft(x, history, draft)
                assert a == b, (name, draft)
                assert seq.rng.random() == fast.rng.random()  # the same draws, in the same order


def test_a_confident_drafted_row_is_decided_by_one_comparison(monkeypatch) -> None:
    s = Sampler(SamplingParams(temperature=0.6, top_p=0.95))
    x = _vocab_rows()["confident"]
    monkeypatch.setattr(s, "sample", lambda *a: pytest.fail("the full sample ran on a confident row"))
    assert s.sample_draft(x, [], 7) == 7
    with pytest.raises(pytest.fail.Exception):
        s.sample_draft(x, [], 8)  # not the draft's row: the sampler's own path


def test_a_drafted_row_with_light_runners_up_is_decided_without_the_full_pass(monkeypatch) -> None:
    s = Sampler(SamplingParams(temperature=0.6, top_p=0.95))
    rows = _vocab_rows()
    monkeypatch.setattr(s, "distribution", lambda *a, **k: pytest.fail("the full pass ran"))
    assert s.sample_draft(rows["runners-up"], [], 7) == 7
    with pytest.raises(pytest.fail.Exception):
        s.sample_draft(rows["crowd"], [], 7)  # the top alone is short of top_p: the bound cannot decide it


def test_a_top_just_short_of_top_p_is_never_decided_alone(monkeypatch) -> None:
    # forty equal runners-up and a top holding top_p less 5e-7: the nucleus takes a runner-up, so the bound
    # (which counts every one of them at the runner-up's weight) must leave the row to the full pass
    x = np.full(151936, -40.0, dtype=np.float32)
    x[7] = 0.0
    w = (1.0 / (0.95 * (1 - 5e-7)) - 1.0) / 40
    x[100:140] = np.float32(0.6 * np.log(w))
    params = SamplingParams(temperature=0.6, top_p=0.95, seed=2)
    assert len(Sampler(params).distribution(x, [])[0]) == 2
    s, ref = Sampler(params), Sampler(params)
    assert [s.sample_draft(x, [], 7) for _ in range(50)] == [ref.sample(x, []) for _ in range(50)]
    monkeypatch.setattr(s, "distribution", lambda *a, **k: pytest.fail("the full pass ran"))
    with pytest.raises(pytest.fail.Exception):
        s.sample_draft(x, [], 7)


@pytest.mark.parametrize("params", [SamplingParams(temperature=0.0), SamplingParams(temperature=0.0, repeat_penalty=1.5)])
def test_is_argmax_answers_as_argmax_does(params: SamplingParams) -> None:
    s = Sampler(params)
    rng = np.random.default_rng(11)
    rows = list(_vocab_rows().values())
    tie = np.zeros(64, dtype=np.float32)
    tie[[5, 9, 40]] = 3.0  # np.argmax takes the first of equal maxima
    nan = np.zeros(64, dtype=np.float32)
    nan[[4, 30]] = [5.0, np.nan]
    rows += [tie, nan, (rng.standard_normal(64)).astype(np.float32)]
    history = [5, 7, 20]
    for x in rows:
        n = x.shape[0]
        want = s.argmax(x, history)
        for token in {0, 4, 5, 7, 9, 20, 30, 40, n - 1, want, n, -1}:
            assert s.is_argmax(x, history, token) == (token == want), (token, want)
