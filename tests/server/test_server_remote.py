"""RemoteEngine: attached to tau serve it behaves like the engine in-process; it also works
against a generic OpenAI-compatible endpoint (a tau server without its /tau extensions)."""

from __future__ import annotations

import threading
import time

import pytest

from app.engines.remote import RemoteEngine, RemoteEngineError
from app.engines.remote_wire import client_stats, parse_chatml
from app.wire.chatml import render_chatml
from engine.scripted import ScriptedEngine
from engine.types import (
    CancelToken,
    DoneEvent,
    Engine,
    GenerateRequest,
    SamplingParams,
    StatsEvent,
    TokenEvent,
    generate,
    prime,
)

REPLIES = [
    "Sure! Here is the function:\n```python\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n```\n",
    'I will read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>',
    "0123456789" * 5,
]
MSGS = [{"role": "system", "content": "You are tau."}, {"role": "user", "content": "write fib"}]
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


def run_all(engine: Engine) -> list[DoneEvent]:
    out = []
    prompt = engine.chat_prompt(MSGS, TOOLS)
    for max_tokens, stop in ((512, ()), (512, ()), (2, ("9",))):
        req = GenerateRequest(prompt, max_tokens=max_tokens, stop=stop, sampling=SamplingParams(temperature=0.0))
        out.append(generate(engine, req))
    return out


def test_attached_run_matches_in_process(serve):
    direct = run_all(ScriptedEngine(REPLIES))
    behind = ScriptedEngine(REPLIES)
    srv = serve(behind)
    remote = RemoteEngine(srv.url)
    assert remote.kind == "tau"
    via_server = run_all(remote)
    for a, b in zip(direct, via_server, strict=True):
        assert b.text == a.text
        assert b.finish_reason == a.finish_reason
        assert b.token_ids == a.token_ids
        assert b.stats.completion_tokens == a.stats.completion_tokens
        assert b.stats.verify_passes == a.stats.verify_passes and b.stats.tau == a.stats.tau
        assert b.stats.drafted == a.stats.drafted and b.stats.accept_by_pos == a.stats.accept_by_pos
    assert [d.finish_reason for d in via_server] == ["stop", "stop", "length"]
    # the server received exactly the templated prompt the client rendered
    assert behind.prompts == [render_chatml(MSGS, TOOLS)] * 3
    assert behind.requests[2].max_tokens == 2 and behind.requests[2].stop == ("9",)
    assert via_server[2].text == "01234567"
    remote.close()


def test_remote_engine_protocol_surface(serve):
    behind = ScriptedEngine(["a b c d e f g h i j"], n_ctx=2048, name="qwen-x")
    srv = serve(behind)
    remote = RemoteEngine(srv.url + "/v1")  # a /v1 suffix is fine too
    assert isinstance(remote, Engine)
    assert remote.info.n_ctx == 2048 and remote.info.name == "qwen-x"
    assert "tau serve" in remote.info.backend and srv.url in remote.info.backend
    assert remote.count_tokens("hello world, hello") == behind.count_tokens("hello world, hello")
    assert remote.chat_prompt(MSGS, TOOLS) == behind.chat_prompt(MSGS, TOOLS)
    assert remote.chat_prompt(MSGS, add_generation_prompt=False) == render_chatml(MSGS, None, False)
    remote.register_context("src/a.py", "def a(): pass\n")
    assert behind.contexts == {"src/a.py": "def a(): pass\n"}
    events = list(remote.stream(GenerateRequest(remote.chat_prompt(MSGS))))
    assert isinstance(events[-1], DoneEvent) and sum(isinstance(e, DoneEvent) for e in events) == 1
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)) == events[-1].text == "a b c d e f g h i j"
    assert any(isinstance(e, StatsEvent) for e in events)
    remote.close()


def test_cancel_through_remote_frees_the_server(serve):
    behind = ScriptedEngine(["x" * 40_000, "next one"], delay=0.002)
    srv = serve(behind)
    remote = RemoteEngine(srv.url)
    cancel = CancelToken()
    t0 = time.monotonic()
    events = []
    for ev in remote.stream(GenerateRequest("p", max_tokens=20_000), cancel):
        events.append(ev)
        if len(events) == 5:
            cancel.cancel()
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.finish_reason == "cancelled"
    assert time.monotonic() - t0 < 5  # 10k tokens at 2 ms would take 20 s
    t1 = time.monotonic()
    assert generate(remote, GenerateRequest("q")).text == "next one"
    assert time.monotonic() - t1 < 2
    remote.close()


def test_cancel_while_blocked_waiting(serve):
    """Cancel from another thread while the remote read blocks (request queued behind another)."""
    behind = ScriptedEngine(["y" * 40_000, "never", "after"], delay=0.002)
    srv = serve(behind, keepalive_s=30)
    hog = RemoteEngine(srv.url)
    hog_cancel = CancelToken()
    hog_events: list = []
    t = threading.Thread(target=lambda: hog_events.extend(hog.stream(GenerateRequest("hog", max_tokens=20_000), hog_cancel)))
    t.start()
    while not behind.prompts:
        time.sleep(0.01)
    waiter = RemoteEngine(srv.url)
    cancel = CancelToken()
    threading.Timer(0.3, cancel.cancel).start()
    t0 = time.monotonic()
    done = generate(waiter, GenerateRequest("waiting", max_tokens=5), cancel)
    assert done.finish_reason == "cancelled" and time.monotonic() - t0 < 3
    hog_cancel.cancel()
    t.join(5)
    assert hog_events[-1].finish_reason == "cancelled"
    assert generate(waiter, GenerateRequest("z")).text == "never"  # the dropped waiter never reached the engine
    assert "waiting" not in behind.prompts
    hog.close()
    waiter.close()


def test_generic_openai_endpoint(serve):
    """Without tau's extensions the server is just an OpenAI-compatible endpoint."""
    behind = ScriptedEngine(["plain answer", 'x\n<tool_call>\n{"name": "read_file", "arguments": {"path": "b"}}\n</tool_call>', "raw"])
    srv = serve(behind, tau_extensions=False, model_name="foreign-model")
    remote = RemoteEngine(srv.url + "/v1", n_ctx=8192)
    assert remote.kind == "openai" and remote.info.name == "foreign-model"
    assert remote.info.n_ctx == behind.info.n_ctx  # from /v1/models meta
    assert "openai-compatible" in remote.info.backend
    msgs = MSGS + [{"role": "assistant", "content": "ok"}, {"role": "tool", "content": "result"},
                   {"role": "user", "content": "again"}]
    prompt = remote.chat_prompt(msgs)
    assert prompt == render_chatml(msgs)
    done = generate(remote, GenerateRequest(prompt, max_tokens=100))
    assert done.text == "plain answer" and done.finish_reason == "stop"
    assert behind.prompts[-1] == prompt  # chat completions: the server re-rendered the same conversation
    assert done.stats.completion_tokens == 3 and done.stats.prompt_tokens == behind.count_tokens(prompt)
    # tools go natively; the server's structured tool_calls come back as <tool_call> text
    prompt = remote.chat_prompt(MSGS, TOOLS)
    done = generate(remote, GenerateRequest(prompt))
    assert behind.prompts[-1] == render_chatml(MSGS, TOOLS)
    assert done.text.startswith("x") and '<tool_call>\n{"name": "read_file", "arguments": {"path": "b"}}\n</tool_call>' in done.text
    # a prompt that is not ChatML goes to /v1/completions untouched
    assert generate(remote, GenerateRequest("raw prompt")).text == "raw"
    assert behind.prompts[-1] == "raw prompt"
    remote.register_context("k", "v")  # a no-op there
    assert behind.contexts == {}
    assert prime(remote, prompt) == 0 and behind.primed == []  # so is priming
    remote.close()


def test_an_attached_front_end_primes_through_the_server(serve):
    behind = ScriptedEngine([])
    remote = RemoteEngine(serve(behind).url)
    prompt = remote.chat_prompt(MSGS[:1], add_generation_prompt=False)
    assert prime(remote, prompt) == behind.count_tokens(prompt) > 0
    assert behind.primed == [prompt]
    assert prime(remote, prompt, _cancelled()) == 0 and behind.primed == [prompt]
    remote.close()
    assert prime(remote, prompt) == 0


def _cancelled() -> CancelToken:
    c = CancelToken()
    c.cancel()
    return c


def test_endpoint_with_api_key_and_errors(serve):
    srv = serve(ScriptedEngine(["ok"]), api_key="k1")
    with pytest.raises(RemoteEngineError, match="refused the API key"):
        RemoteEngine(srv.url)
    remote = RemoteEngine(srv.url, api_key="k1")
    assert generate(remote, GenerateRequest("p")).text == "ok"
    done = generate(remote, GenerateRequest("p"))  # scripted engine has no reply left
    assert done.finish_reason == "error" and "no reply left" in (done.error or "")
    remote.close()
    with pytest.raises(RemoteEngineError, match="cannot reach"):
        RemoteEngine("http://127.0.0.1:9", timeout=2)


def test_server_going_away_mid_stream_is_an_error_done_event(serve):
    behind = ScriptedEngine(["z" * 40_000], delay=0.002)
    srv = serve(behind)
    remote = RemoteEngine(srv.url)
    it = remote.stream(GenerateRequest("p", max_tokens=20_000))
    assert isinstance(next(it), TokenEvent | StatsEvent)
    srv.server.force_exit = True
    srv.stop()
    done = list(it)[-1]
    assert isinstance(done, DoneEvent) and done.finish_reason == "error" and done.error
    remote.close()


def test_client_side_stats_from_llama_server_timings():
    stats = client_stats(0.0, 0.5, 2.0, 10, {"prompt_tokens": 100, "completion_tokens": 40,
                         "prompt_tokens_details": {"cached_tokens": 60}},
                         {"prompt_ms": 250.0, "predicted_ms": 1000.0, "draft_n": 50, "draft_n_accepted": 30})
    assert stats.prompt_tokens == 100 and stats.reused_tokens == 60 and stats.completion_tokens == 40
    assert stats.prefill_s == 0.25 and stats.decode_s == 1.0 and stats.decode_tok_s == 40.0
    assert stats.accepted == {"server": 30} and stats.verify_passes == 10 and stats.tau == 4.0
    bare = client_stats(0.0, 0.5, 2.0, 12, {}, {})
    assert bare.completion_tokens == 12 and bare.prefill_s == 0.5 and bare.decode_s == 1.5


def test_parse_chatml_round_trip():
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "u\nmulti"},
            {"role": "assistant", "content": "a"}, {"role": "tool", "content": "t"}]
    assert parse_chatml(render_chatml(msgs)) == msgs
    assert parse_chatml("no chatml here") is None
    assert parse_chatml(render_chatml(msgs, add_generation_prompt=False)) is None


def test_cancelling_a_stream_while_events_keep_coming_stops_it():
    # What made the test above flaky: Python 3.11's asyncio.wait_for returns the inner result
    # when a cancellation lands just as the queue's get() completes, so a forced shutdown's
    # cancellation of a busy stream was swallowed and the stream ran to its end.
    import asyncio

    from app.server.streaming import _GONE
    from app.server.streaming import events as _events
    from app.server.worker import Job

    class Ctx:
        keepalive_s = 5.0

    async def main() -> tuple[int, int]:
        swallowed = 0
        for _ in range(200):
            job = Job(0, GenerateRequest("p"), asyncio.get_running_loop())
            for _ in range(1000):
                job.events.put_nowait(TokenEvent("z", (1,)))
            job.events.put_nowait(_GONE)  # type: ignore[arg-type]

            async def consume(job=job) -> None:
                async for _ in _events(Ctx(), job):  # type: ignore[arg-type]
                    await asyncio.sleep(0)

            task = asyncio.ensure_future(consume())
            for _ in range(3):
                await asyncio.sleep(0)
            task.cancel()
            try:
                await task
                swallowed += 1  # the consumer ran to the end of the queue despite the cancel
            except asyncio.CancelledError:
                pass
        return swallowed, 200

    swallowed, tries = asyncio.run(main())
    assert swallowed == 0, f"{swallowed} of {tries} cancellations were swallowed"
