"""MTP (NextN) drafting on a tiny random-weight glm4moe GGUF with one NextN block, written
by the test (tests/engine/mtpmodel.py) and driven through the real llama.cpp."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import backend
from engine.decoder import run
from engine.drafters.base import Drafter
from engine.drafters.mtp import MtpDrafter
from engine.gguf_info import read_gguf
from engine.mtp_backend import MtpHead, MtpTargetContext, nextn_layers
from engine.policy import CostCurve
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams
from tests.engine.mtpmodel import write_mtp_model

PROMPTS = [
    (1, 3, 4, 5, 6, 7, 8, 9, 10, 3, 4, 5),
    (1, 12, 9, 4, 4, 7),
    (1, 6, 13, 8, 3, 3, 10, 11, 5, 14, 9, 4, 6, 6, 3, 7, 12, 8, 10, 5, 13),  # > n_batch: chunked replay
]


@pytest.fixture(scope="module")
def mtp_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_mtp_model(tmp_path_factory.mktemp("mtp") / "tiny-mtp.gguf")


@pytest.fixture(scope="module")
def mtp(mtp_gguf: Path):
    model = backend.Model(str(mtp_gguf), gpu_layers=0, load_mtp=True)
    tctx = MtpTargetContext(model, n_ctx=256, n_batch=16, threads=1)
    plain = backend.Context(model, n_ctx=256, n_batch=16, threads=1)
    yield model, tctx, plain
    plain.close()
    tctx.close()
    model.close()


def test_gguf_reports_mtp_heads(mtp_gguf: Path, tmp_path: Path) -> None:
    assert read_gguf(mtp_gguf).mtp_layers == 1  # what `tau models` shows
    from tests.engine.tinymodel import write_tiny_model

    assert read_gguf(write_tiny_model(tmp_path / "plain.gguf")).mtp_layers == 0


def test_llama_cpp_loads_the_heads(mtp) -> None:
    model, tctx, _ = mtp
    assert model.n_layer_nextn == 1 and nextn_layers(model) == 1
    assert tctx.head.ptr and tctx.head.n_embd == 64


def test_model_without_heads_is_refused(tmp_path: Path) -> None:
    from tests.engine.tinymodel import write_tiny_model

    model = backend.Model(str(write_tiny_model(tmp_path / "plain.gguf")), gpu_layers=0)
    try:
        with pytest.raises(backend.BackendError):
            MtpTargetContext(model, n_ctx=64, n_batch=16, threads=1)
    finally:
        model.close()


def test_replayed_head_matches_a_fresh_head(mtp) -> None:
    """The head's KV built batch by batch (chunked prefill, verify batches, rollbacks)
    gives the same first draft step as one fresh decode of the whole sequence."""
    model, tctx, _ = mtp
    seq = list(PROMPTS[2]) + [3, 9, 4, 11]
    tctx.clear()
    tctx.decode(seq[:-4], 0, all_logits=False)  # two chunks of n_batch 16
    tctx.decode(seq[-4:] + [5, 6], len(seq) - 4, all_logits=True)  # a verify batch...
    tctx.truncate(len(seq) - 1)  # ...of which the last 3 are rejected
    n = len(seq) - 1
    hist = seq[:n] + [7]
    h_last = tctx.h_at(n - 1)
    assert h_last is not None
    step = tctx.head.decode([7], h_last[None, :], n, output_last=True)
    assert step is not None
    logits, h_out = step
    tctx.head.truncate(n)

    # reference: every target hidden state from one batch, then one head batch
    ref_t = MtpTargetContext(model, n_ctx=64, n_batch=64, threads=1)
    ref_head = MtpHead(model, ref_t.ptr, n_ctx=64, n_batch=64, threads=1)
    try:
        ref_t.decode(hist, 0, all_logits=False)
        h_all = ref_t._h.copy()
        shifted = np.concatenate([np.zeros((1, h_all.shape[1]), np.float32), h_all[:-1]])
        ref = ref_head.decode(hist, shifted, 0, output_last=True)
        assert ref is not None
        np.testing.assert_allclose(logits, ref[0], rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(h_out, ref[1], rtol=1e-3, atol=1e-3)
        assert tctx.h_gaps == 0
    finally:
        ref_head.close()
        ref_t.close()


def test_drafter_proposes_from_the_target_state(mtp) -> None:
    _model, tctx, _ = mtp
    d = MtpDrafter(tctx)
    assert isinstance(d, Drafter)
    tctx.clear()
    prompt = list(PROMPTS[0])
    rows = tctx.decode(prompt, 0, all_logits=False)
    hist = prompt + [int(np.argmax(rows[-1]))]
    draft = d.propose(hist, 5)
    assert len(draft.tokens) == 5 and draft.source == "mtp" and draft.probs is None
    assert tctx.head.n_kv == len(prompt)  # drafted positions were dropped again
    assert d.propose(hist, 5).tokens == draft.tokens  # deterministic, state unchanged
    assert d.propose(hist[:-2] + [3, 3], 5).tokens == ()  # not the target's history: no draft
    d.set_sampling(SamplingParams(temperature=0.8, seed=1))
    sd = d.propose(hist, 4)
    assert sd.probs is not None and sd.probs.shape == (4, tctx.n_vocab)
    np.testing.assert_allclose(sd.probs.sum(axis=1), 1.0, rtol=1e-5)


def _generate(
    target: Target, model, prompt, spec: SpecConfig, slots: dict, sampling: SamplingParams, n: int = 40
):
    req = GenerateRequest(tuple(prompt), max_tokens=n, sampling=sampling)
    sp = Speculator(CostCurve({1: 1.0, 2: 1.0, 8: 1.0}), slots)
    return run(target, model, list(prompt), req, spec, sp, lambda _e: None)


def test_greedy_with_mtp_speculation_equals_plain_greedy(mtp) -> None:
    model, tctx, plain = mtp
    drafter = MtpDrafter(tctx)
    slot = DrafterSlot(drafter, lookup=False)
    spec = SpecConfig(drafters=("mtp",), adaptive=False, fixed_window=4, max_window=4)
    off = SpecConfig(drafters=())
    plain_target = Target(plain)
    tctx.clear()
    mtp_target = Target(tctx)  # one Target across requests: prefix reuse and rollbacks included
    greedy = SamplingParams()
    for prompt in PROMPTS + [PROMPTS[0] + (7, 8)]:
        ref = _generate(plain_target, model, prompt, off, {}, greedy)
        got = _generate(mtp_target, model, prompt, spec, {"mtp": slot}, greedy)
        assert got.token_ids == ref.token_ids, prompt
        assert len(ref.token_ids) > 10
        assert ref.finish_reason == got.finish_reason and not got.error
    assert drafter.out_of_step == 0
    assert slot.drafted > 50
    assert 0 < slot.accepted < slot.drafted  # drafts were verified: some accepted, some not


def test_sampled_mode_drafts_with_q(mtp) -> None:
    model, tctx, _ = mtp
    drafter = MtpDrafter(tctx)
    sampling = SamplingParams(temperature=0.8, seed=3)
    drafter.set_sampling(sampling)
    slot = DrafterSlot(drafter, lookup=False)
    spec = SpecConfig(drafters=("mtp",), adaptive=False, fixed_window=3, max_window=3)
    tctx.clear()
    done = _generate(Target(tctx), model, PROMPTS[1], spec, {"mtp": slot}, sampling, n=30)
    assert done.finish_reason in ("length", "stop") and slot.drafted > 0


def test_head_token_cost_leaves_the_kv_alone(mtp) -> None:
    _model, tctx, _ = mtp
    tctx.clear()
    tctx.decode(list(PROMPTS[1]), 0, all_logits=False)
    cost = tctx.head.token_cost()
    assert cost > 0 and tctx.head.n_kv == len(PROMPTS[1])
