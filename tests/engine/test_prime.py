"""Priming: an engine computes a prompt's KV cache before the request that starts with it (the TUI
does this while the user types), and the request then prefills only the rest and decodes the same."""

from __future__ import annotations

from pathlib import Path

import engine.local
from engine.config import EngineConfig
from engine.local import LocalEngine
from engine.types import CancelToken, GenerateRequest, generate, prime
from tests.engine.test_prefix_state import FIXED
from tests.engine.tinymodel import write_tiny_model

QUESTION = " question one"


class CancelAfter(CancelToken):
    """Cancelled once it has been asked ``n`` times (a user closing the session mid-prime)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.left = n

    @property
    def cancelled(self) -> bool:
        self.left -= 1
        return self.left < 0


def _engine(tmp_path: Path, cache: str = "cache", **kw) -> LocalEngine:
    model = tmp_path / "t.gguf"
    if not model.exists():
        write_tiny_model(model, vocab=300, byte_fallback=True)
    return LocalEngine.load(EngineConfig(model_path=str(model), n_ctx=512, threads=1, cache_dir=str(tmp_path / cache), **kw))


def _answer(eng: LocalEngine, prompt: str):
    return generate(eng, GenerateRequest(prompt, max_tokens=16, spec="off"))


def test_a_primed_prompt_is_not_computed_again_and_decodes_the_same(tmp_path: Path) -> None:
    cold = _engine(tmp_path, "cold", prefix_cache=False)
    try:
        want = _answer(cold, FIXED + QUESTION)
    finally:
        cold.close()
    eng = _engine(tmp_path, prefix_cache=False)
    try:
        n = prime(eng, FIXED)
        assert n == len(eng.tokenize(FIXED))
        assert prime(eng, FIXED) == 0  # already computed
        got = _answer(eng, FIXED + QUESTION)
    finally:
        eng.close()
    assert want.stats.reused_tokens == 0 and got.stats.reused_tokens >= n - 1
    assert got.token_ids == want.token_ids


def test_a_cancelled_prime_stops_between_chunks_and_keeps_what_it_computed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(engine.local, "PRIME_CHUNK", 64)
    eng = _engine(tmp_path, prefix_cache=False)
    try:
        assert len(eng.tokenize(FIXED)) > 128
        assert eng.prime(FIXED, CancelAfter(0)) == 0
        assert eng.prime(FIXED, CancelAfter(2)) == 64  # asked before the job, then before each chunk
        got = _answer(eng, FIXED + QUESTION)
    finally:
        eng.close()
    assert got.error is None and got.stats.reused_tokens == 64


def test_a_prime_saves_the_prefix_for_the_next_process(tmp_path: Path) -> None:
    eng = _engine(tmp_path)
    try:
        n = eng.prime(FIXED)
    finally:
        eng.close()
    assert list((tmp_path / "cache" / "prefix").rglob("*.kv")), "the prime saved nothing"
    again = _engine(tmp_path)
    try:
        got = _answer(again, FIXED + QUESTION)
    finally:
        again.close()
    assert got.error is None and got.stats.reused_tokens >= n - 1


def test_engines_that_cannot_prime_compute_nothing() -> None:
    class Plain:  # an engine without prime (a remote endpoint)
        pass

    assert prime(Plain(), "anything") == 0  # type: ignore[arg-type]


def test_a_closed_engine_primes_nothing(tmp_path: Path) -> None:
    eng = _engine(tmp_path, prefix_cache=False)
    eng.close()
    assert eng.prime(FIXED) == 0


def test_an_unsaved_prime_leaves_the_saving_to_the_request_that_uses_it(tmp_path: Path) -> None:
    eng = _engine(tmp_path)
    states = tmp_path / "cache" / "prefix"
    try:
        n = eng.prime(FIXED, save=False)
        assert n > 0 and not list(states.rglob("*.kv"))  # a draft message is not written to disk
        got = _answer(eng, FIXED + QUESTION)
        assert got.stats.reused_tokens >= n - 1
    finally:
        eng.close()
    assert list(states.rglob("*.kv")), "the request that used the prime saved nothing"


def test_a_prime_yields_to_a_request_queued_behind_it(tmp_path: Path, monkeypatch) -> None:
    import threading
    import time

    monkeypatch.setattr(engine.local, "PRIME_CHUNK", 32)
    eng = _engine(tmp_path, prefix_cache=False)
    primed: list[int] = []
    answered: list = []

    def wait_queue(n: int) -> None:
        while eng.queue_length < n:
            time.sleep(0.001)

    try:
        hold = threading.Event()
        blocker = eng._owner.submit(lambda: hold.wait(10))  # the engine is busy
        t = threading.Thread(target=lambda: primed.append(eng.prime(FIXED)))
        t.start()
        wait_queue(1)  # the prime waits behind the blocker
        request = threading.Thread(target=lambda: answered.append(_answer(eng, FIXED + QUESTION)))
        request.start()
        wait_queue(2)  # ...and a request behind the prime
        hold.set()
        blocker.result(10)
        t.join(10)
        request.join(30)
    finally:
        eng.close()
    assert primed == [0]  # it gave way at once
    assert answered[0].error is None and answered[0].stats.reused_tokens == 0  # the request computed it all
