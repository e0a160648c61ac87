"""The engine on the default model pack (Qwen2.5-Coder-1.5B target, 0.5B drafter).

Greedy decoding with speculation must reproduce plain greedy decoding token for token in
every configuration. llama.cpp's batched kernels can round differently from single-token
decoding, so where the two differ the first differing position must be a near-tie: the
target's top-2 logit gap there (from a plain single-token decode) is under
NEAR_TIE_LOGIT_GAP = 0.5 nats.
"""

from __future__ import annotations

import pytest

from engine.lab.benchdata.workloads import source
from engine.spec import SpecConfig
from engine.types import (
    CancelToken,
    DoneEvent,
    GenerateRequest,
    SamplingParams,
    StatsEvent,
    TokenEvent,
    generate,
)
from engine.verify import NEAR_TIE_LOGIT_GAP

pytestmark = pytest.mark.real_model

MAX_TOKENS = 40
CONFIGS = {
    "ngram": SpecConfig(drafters=("ngram",)),
    "ngram-fixed8": SpecConfig(drafters=("ngram",), adaptive=False, fixed_window=8),
    "draft-fixed3": SpecConfig(drafters=("draft",), adaptive=False, fixed_window=3),
    "auto": SpecConfig(),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):
    from engine.config import EngineConfig
    from engine.local import LocalEngine
    from engine.modelpack import default_draft_path, default_target_path
    from engine.paths import cache_dir

    eng = LocalEngine.load(
        EngineConfig(
            model_path=str(default_target_path()),
            draft_model_path=str(default_draft_path()),
            n_ctx=4096,
            cache_dir=str(cache_dir()),
            log_path=str(tmp_path_factory.mktemp("log") / "llama.log"),
        )
    )
    yield eng
    eng.close()


def prompts(engine) -> list[str]:
    code = source("inventory.py")
    return [
        engine.chat_prompt([{"role": "user", "content": f"```python\n{code}```\nRepeat this file exactly, adding a module docstring line 'Inventory.' at the top."}]),
        engine.chat_prompt([{"role": "user", "content": "Explain in two sentences what a Python generator is."}]),
        "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    ]


def test_greedy_speculation_reproduces_plain_greedy(engine) -> None:
    greedy = SamplingParams()
    checked = 0
    for prompt in prompts(engine):
        ptoks = engine.tokenize(prompt)
        ref = list(generate(engine, GenerateRequest(prompt, MAX_TOKENS, greedy, spec="off")).token_ids)
        assert len(ref) > 5
        for name, spec in CONFIGS.items():
            done = _run(engine, GenerateRequest(prompt, MAX_TOKENS, greedy), spec)
            got = list(done.token_ids)
            if got == ref:
                checked += 1
                continue
            i = next((j for j, (a, b) in enumerate(zip(got, ref, strict=False)) if a != b), min(len(got), len(ref)))
            gap = engine.next_token_gap(ptoks + ref[:i])
            assert gap < NEAR_TIE_LOGIT_GAP, f"{name}: differs from plain at token {i} where the top-2 gap is {gap:.3f}"
    assert checked >= len(CONFIGS)  # most comparisons are exact


def test_speculation_pays_on_code_the_model_repeats_and_reports_stats(engine) -> None:
    prompt = prompts(engine)[0]
    events = list(engine.stream(GenerateRequest(prompt, 64, SamplingParams()), spec=CONFIGS["ngram-fixed8"]))
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.finish_reason in ("length", "stop")
    s = done.stats
    assert s.tau > 1.5, s.to_dict()
    assert s.accepted["ngram"] > 0 and s.drafted["ngram"] >= s.accepted["ngram"]
    assert s.accept_by_pos and 0 < s.accept_by_pos[0] <= 1
    assert s.prefill_tok_s > 0 and s.decode_tok_s > 0 and s.wall_tok_s > 0 and s.ceiling_tok_s > 0
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)) == done.text
    assert any(isinstance(e, StatsEvent) for e in events)


def test_prefix_reuse_and_cancellation(engine) -> None:
    p = prompts(engine)[1]
    generate(engine, GenerateRequest(p, 4, spec="off"))
    follow = p + " A generator"
    d = generate(engine, GenerateRequest(follow, 4, spec="off"))
    assert d.stats.reused_tokens >= len(engine.tokenize(p)) - 1
    cancel = CancelToken()
    n = 0
    for ev in engine.stream(GenerateRequest(p, 200, spec="off"), cancel):
        if isinstance(ev, TokenEvent):
            n += 1
            if n == 3:
                cancel.cancel()
        if isinstance(ev, DoneEvent):
            assert ev.finish_reason == "cancelled"
            assert len(ev.token_ids) < 10


def _run(engine, req: GenerateRequest, spec: SpecConfig) -> DoneEvent:
    done = None
    for ev in engine.stream(req, spec=spec):
        if isinstance(ev, DoneEvent):
            done = ev
    assert done is not None and done.error is None, done
    return done
