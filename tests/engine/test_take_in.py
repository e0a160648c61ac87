"""The lookup drafters index a request's prompt on a thread of their own while the target
prefills it, so the first proposal of the request does not pay for it in decode time."""

from __future__ import annotations

import threading

from engine.decoder import run
from engine.drafters.base import Draft
from engine.drafters.ngram import NgramDrafter
from engine.policy import Acceptance, CostCurve
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams
from tests.engine.test_shadow import CountingCtx, Vocab


class Spy:
    name = "ngram"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    def take_in(self, history) -> None:
        self.calls.append(("take_in", threading.current_thread().name, len(history)))

    def propose(self, history, max_len):
        self.calls.append(("propose", threading.current_thread().name, len(history)))
        return Draft((), self.name)


def test_the_prompt_is_taken_in_beside_the_prefill_before_any_proposal() -> None:
    spy = Spy()
    sp = Speculator(CostCurve({1: 1.0, 2: 1.2}), {"ngram": DrafterSlot(spy)}, Acceptance())
    prompt = list(range(1, 40))
    req = GenerateRequest(tuple(prompt), max_tokens=5, sampling=SamplingParams(temperature=0.0))
    run(Target(CountingCtx()), Vocab(), prompt, req, SpecConfig(drafters=("ngram",)), sp, lambda _e: None)
    assert spy.calls[0] == ("take_in", "tau-take-in", 39)
    assert [c[0] for c in spy.calls[1:]] == ["propose"] * 4 and all(c[1] != "tau-take-in" for c in spy.calls[1:])
    spy.calls.clear()  # plain decoding drafts nothing and takes in nothing
    run(Target(CountingCtx()), Vocab(), prompt, req, SpecConfig(drafters=()), sp, lambda _e: None)
    assert spy.calls == []


def test_a_drafter_that_took_the_prompt_in_proposes_what_it_would_have() -> None:
    prompt = [5, 6, 7, 8, 9, 1, 2, 5, 6, 7, 3, 4] * 20
    cold, warm = NgramDrafter(), NgramDrafter()
    warm.take_in(prompt)
    for extra in ([5, 6], [5, 6, 7, 8]):
        hist = prompt + extra
        assert warm.propose(list(hist), 8) == cold.propose(list(hist), 8)


def test_the_cycle_collector_is_paused_for_a_generation_and_restored_after() -> None:
    import gc

    seen: list[bool] = []
    sp = Speculator(CostCurve({1: 1.0, 2: 1.2}), {"ngram": DrafterSlot(NgramDrafter())}, Acceptance())
    prompt = list(range(1, 40))
    req = GenerateRequest(tuple(prompt), max_tokens=5, sampling=SamplingParams(temperature=0.0))
    assert gc.isenabled()
    try:
        run(Target(CountingCtx()), Vocab(), prompt, req, SpecConfig(drafters=("ngram",)), sp,
            lambda _e: seen.append(gc.isenabled()))
        assert seen and not any(seen) and gc.isenabled()
        gc.disable()  # paused by someone else: it stays so
        run(Target(CountingCtx()), Vocab(), prompt, req, SpecConfig(drafters=()), sp, lambda _e: None)
        assert not gc.isenabled()
    finally:
        gc.enable()
