"""Load test of ``tau serve`` on loopback: ``python -m app.server.loadtest``.

Starts the server on a ScriptedEngine (127.0.0.1, free port) and checks, printing the numbers:

* FIFO: N concurrent streaming clients, each admitted while the ones before it still wait,
  are answered completely, none lost, in the order they arrived;
* disconnects: a client that drops a long generation (streaming or not) frees the engine at
  once for the next request; a client that drops while queued never reaches the engine;
* memory: Python heap (tracemalloc) and RSS stay flat over rounds of N concurrent clients.

Traffic goes only to 127.0.0.1 and is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
import tracemalloc
from dataclasses import asdict, dataclass, field

import httpx

from app.server.app import create_app
from app.server.runner import ServerThread
from app.wire.chatml import parse_prompt
from engine.scripted import ScriptedEngine

LONG = "x" * 400_000  # 100k scripted tokens: minutes at the test's delay; only ever cancelled


def _reply(prompt: str) -> str:
    """The scripted engine's answer: echoes the client tag so answers can be checked."""
    users = [m["content"] for m in parse_prompt(prompt) or [] if m["role"] == "user"]
    tag = users[-1] if users else prompt
    if tag.startswith("LONG"):
        return LONG
    return f"answer to {tag}: " + "lorem ipsum dolor sit amet " * 4


def rss_kb() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass
class LoadResult:
    clients: int = 0
    rounds: int = 0
    requests: int = 0
    answered: int = 0
    lost: int = 0
    wrong: int = 0
    fifo_ok: bool = False
    client_done_inversions: int = 0
    served_order: list[int] = field(default_factory=list)
    latency_p50_s: float = 0.0
    latency_p95_s: float = 0.0
    latency_max_s: float = 0.0
    fifo_round_s: float = 0.0
    tokens_per_s: float = 0.0
    cancel_stream_free_s: float = 0.0  # streaming client drops a long generation -> next request's first token
    cancel_plain_free_s: float = 0.0  # same for a non-streaming client
    queued_drop_reached_engine: bool = True
    heap_growth_kb: float = 0.0  # tracemalloc, after round 1 -> after the last round
    heap_per_round_kb: list[float] = field(default_factory=list)
    rss_before_kb: int = 0
    rss_after_kb: int = 0
    wall_s: float = 0.0

    def summary(self) -> str:
        lines = [
            f"clients={self.clients} rounds={self.rounds} requests={self.requests} answered={self.answered} "
            f"lost={self.lost} wrong={self.wrong}",
            f"FIFO in arrival order: {self.fifo_ok} (engine served {self.served_order[:8]}...; "
            f"clients saw {self.client_done_inversions} out-of-order finishes)",
            f"latency p50={self.latency_p50_s * 1000:.0f} ms p95={self.latency_p95_s * 1000:.0f} ms "
            f"max={self.latency_max_s * 1000:.0f} ms; FIFO round {self.fifo_round_s:.2f} s; "
            f"{self.tokens_per_s:.0f} tok/s through the server",
            f"disconnect frees the engine: streaming {self.cancel_stream_free_s * 1000:.0f} ms, "
            f"non-streaming {self.cancel_plain_free_s * 1000:.0f} ms; client dropped while queued reached the "
            f"engine: {self.queued_drop_reached_engine}",
            f"memory: heap growth {self.heap_growth_kb:.1f} KiB over {self.rounds - 1} rounds "
            f"(per round {', '.join(f'{x:.0f}' for x in self.heap_per_round_kb)} KiB); "
            f"RSS {self.rss_before_kb} -> {self.rss_after_kb} KiB",
            f"wall {self.wall_s:.1f} s",
        ]
        return "\n".join(lines)


async def _chat_stream(client: httpx.AsyncClient, tag: str, out: dict) -> None:
    t0 = time.perf_counter()
    body = {"model": "scripted", "stream": True, "max_tokens": 200,
            "messages": [{"role": "user", "content": tag}]}
    text: list[str] = []
    finish = None
    async with client.stream("POST", "/v1/chat/completions", json=body) as resp:
        resp.raise_for_status()
        async for line in resp.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            data = json.loads(line[6:])
            for ch in data.get("choices", []):
                text.append(ch["delta"].get("content") or "")
                finish = ch.get("finish_reason") or finish
    out[tag] = {"text": "".join(text), "finish": finish, "latency": time.perf_counter() - t0,
                "done_at": time.perf_counter()}


async def _wait_for(pred, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(0.002)


async def _fifo_round(client: httpx.AsyncClient, worker, clients: int, rnd: int, res: LoadResult) -> list[float]:  # type: ignore[no-untyped-def]
    out: dict[str, dict] = {}
    tags = [f"r{rnd}-c{i}" for i in range(clients)]
    first_seq = None
    tasks = []
    t0 = time.perf_counter()
    for tag in tags:
        before = worker.submitted
        tasks.append(asyncio.ensure_future(_chat_stream(client, tag, out)))
        await _wait_for(lambda b=before: worker.submitted > b)  # admitted before the next one arrives
        if first_seq is None:
            first_seq = worker.submitted
    results = await asyncio.gather(*tasks, return_exceptions=True)
    res.fifo_round_s = time.perf_counter() - t0
    res.requests += clients
    for tag, r in zip(tags, results, strict=True):
        if isinstance(r, BaseException) or tag not in out:
            res.lost += 1
            continue
        ans = out[tag]
        if ans["text"] != _reply(tag)[: 4 * 200] or ans["finish"] != "stop":
            res.wrong += 1
        else:
            res.answered += 1
    assert first_seq is not None
    order = [s - first_seq for s in worker.served if s >= first_seq][:clients]
    # completion times seen by the clients: informational (a starved client loop may read two
    # finished answers in one wake-up, in either order)
    done_at = [out.get(t, {}).get("done_at", float("inf")) for t in tags]
    res.client_done_inversions = sum(1 for a, b in zip(done_at, done_at[1:], strict=False) if b < a)
    ok = order == list(range(clients))
    res.fifo_ok = ok if rnd == 0 else (res.fifo_ok and ok)
    res.served_order = order
    return [out[t]["latency"] for t in tags if t in out]


async def _cancel_frees(client: httpx.AsyncClient, engine: ScriptedEngine, streaming: bool) -> float:
    """A client drops a long generation; seconds until the next request gets its first token."""
    before = len(engine.prompts)
    body = {"model": "scripted", "stream": streaming, "messages": [{"role": "user", "content": "LONG"}]}
    long_task = None
    if streaming:
        async with client.stream("POST", "/v1/chat/completions", json=body) as resp:
            n = 0
            async for line in resp.aiter_lines():
                n += line.startswith("data: ")
                if n >= 3:
                    break
            t_drop = time.perf_counter()
    else:
        long_task = asyncio.ensure_future(client.post("/v1/chat/completions", json=body))
        await _wait_for(lambda: len(engine.prompts) > before)
        await asyncio.sleep(0.05)
        long_task.cancel()  # closes the connection mid-request
        t_drop = time.perf_counter()
    nxt = {"model": "scripted", "stream": True, "messages": [{"role": "user", "content": "next"}]}
    async with client.stream("POST", "/v1/chat/completions", json=nxt) as resp:
        async for line in resp.aiter_lines():
            if '"content":"' in line and '"content":""' not in line:
                break
    if long_task is not None:
        await asyncio.gather(long_task, return_exceptions=True)
    return time.perf_counter() - t_drop


async def _queued_drop(client: httpx.AsyncClient, engine: ScriptedEngine, worker) -> bool:  # type: ignore[no-untyped-def]
    """A client that goes away while waiting in the queue: does the engine ever see it?"""
    long_body = {"model": "scripted", "stream": True, "messages": [{"role": "user", "content": "LONG-2"}]}
    drop_body = {"model": "scripted", "stream": True, "messages": [{"role": "user", "content": "queued-drop"}]}
    async with client.stream("POST", "/v1/chat/completions", json=long_body) as long_resp:
        it = long_resp.aiter_lines()
        await it.__anext__()
        before = worker.submitted
        drop = asyncio.ensure_future(client.post("/v1/chat/completions", json=drop_body))
        await _wait_for(lambda: worker.submitted > before)
        drop.cancel()
        await asyncio.gather(drop, return_exceptions=True)
        await asyncio.sleep(0.1)
    # the long one is dropped here too; let the queue drain
    await _wait_for(lambda: worker.queue_length == 0)
    return any("queued-drop" in p for p in engine.prompts)


async def _run(url: str, engine: ScriptedEngine, worker, clients: int, rounds: int) -> LoadResult:  # type: ignore[no-untyped-def]
    res = LoadResult(clients=clients, rounds=rounds)
    t_start = time.perf_counter()
    limits = httpx.Limits(max_connections=clients + 8, max_keepalive_connections=clients + 8)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60.0, trust_env=False) as client:
        latencies: list[float] = []
        latencies += await _fifo_round(client, worker, clients, 0, res)
        served_first = res.served_order
        res.cancel_stream_free_s = await _cancel_frees(client, engine, streaming=True)
        res.cancel_plain_free_s = await _cancel_frees(client, engine, streaming=False)
        res.queued_drop_reached_engine = await _queued_drop(client, engine, worker)
        # memory: rounds of concurrent clients (all at once), heap measured after each
        gc.collect()
        res.rss_before_kb = rss_kb()
        tracemalloc.start()
        heap: list[float] = []
        for rnd in range(1, rounds + 1):
            out: dict[str, dict] = {}
            tags = [f"m{rnd}-c{i}" for i in range(clients)]
            results = await asyncio.gather(*[_chat_stream(client, t, out) for t in tags], return_exceptions=True)
            res.requests += clients
            for tag, r in zip(tags, results, strict=True):
                if isinstance(r, BaseException) or tag not in out:
                    res.lost += 1
                elif out[tag]["text"] != _reply(tag)[: 4 * 200]:
                    res.wrong += 1
                else:
                    res.answered += 1
                    latencies.append(out[tag]["latency"])
            await _wait_for(lambda: worker.queue_length == 0)
            engine.prompts.clear()  # the scripted engine's own request log is not server state
            engine.requests.clear()
            gc.collect()
            heap.append(tracemalloc.get_traced_memory()[0] / 1024)
        tracemalloc.stop()
        res.rss_after_kb = rss_kb()
        res.heap_per_round_kb = heap
        res.heap_growth_kb = heap[-1] - heap[0] if heap else 0.0
        res.served_order = served_first
    latencies.sort()
    if latencies:
        res.latency_p50_s = statistics.median(latencies)
        res.latency_p95_s = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
        res.latency_max_s = latencies[-1]
    res.wall_s = time.perf_counter() - t_start
    return res


def run_loadtest(clients: int = 20, rounds: int = 4, delay: float = 0.0005) -> LoadResult:
    """Start a server on a ScriptedEngine (127.0.0.1, free port), run the load test, stop it."""
    engine = ScriptedEngine([_reply] * (clients * (rounds + 1) + 16), delay=delay)
    app = create_app(engine, model_name="scripted")
    worker = app.state.worker
    with ServerThread(app) as srv:
        t0 = time.perf_counter()
        res = asyncio.run(_run(srv.url, engine, worker, clients, rounds))
        m = app.state.metrics
        res.tokens_per_s = m.completion_tokens / max(time.perf_counter() - t0, 1e-9)
    engine.close()
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.server.loadtest", description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--delay", type=float, default=0.0005, help="scripted engine's seconds per token")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    a = ap.parse_args(argv)
    res = run_loadtest(a.clients, a.rounds, a.delay)
    print(json.dumps(asdict(res), indent=2) if a.json else res.summary())
    ok = res.lost == 0 and res.wrong == 0 and res.fifo_ok and not res.queued_drop_reached_engine
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
