"""Finding 12: the server answers bad input with a 4xx JSON error, never a 500 or a crash;
slow bodies time out; drafter registrations are bounded; no open port without a key."""

from __future__ import annotations

import dataclasses
import json
import socket
import time

import httpx
import pytest

from app.cli.main import main
from app.server import ServerThread, create_app
from engine.drafters import ngram
from engine.drafters.ngram import NgramDrafter
from engine.scripted import ScriptedEngine

CHAT = "/v1/chat/completions"
COMPL = "/v1/completions"
MSG = [{"role": "user", "content": "hi"}]
HTTP = httpx.Client(timeout=20, trust_env=False)


class VocabEngine(ScriptedEngine):
    """A scripted engine that reports its vocabulary size, as LocalEngine does."""

    @property
    def info(self):  # type: ignore[override]
        return dataclasses.replace(super().info, n_vocab=1000)


@pytest.fixture(autouse=True)
def _dirs(tmp_path, monkeypatch) -> None:
    for name in ("RUNTIME", "STATE", "CONFIG", "CACHE"):
        (tmp_path / name.lower()).mkdir()
        monkeypatch.setenv(f"TAU_{name}_DIR", str(tmp_path / name.lower()))
    monkeypatch.delenv("TAU_SERVE_API_KEY", raising=False)


@pytest.fixture(scope="module")
def srv():
    app = create_app(VocabEngine(["fine"] * 500, n_ctx=4000), body_timeout_s=0.5)
    with ServerThread(app) as s:
        yield s


def raw(srv, path: str, body: bytes) -> httpx.Response:
    return HTTP.post(srv.url + path, content=body, headers={"content-type": "application/json"})


def assert_4xx(resp: httpx.Response, status: int = 400) -> dict:
    assert resp.status_code == status, resp.text
    err = resp.json()["error"]
    assert err["message"] and err["type"] == "invalid_request_error" and "Traceback" not in err["message"]
    return err


NON_FINITE = [b"NaN", b"Infinity", b"-Infinity", b"1e400"]


@pytest.mark.parametrize("field", ["temperature", "top_p", "min_p", "repeat_penalty"])
@pytest.mark.parametrize("value", NON_FINITE)
def test_non_finite_sampling_values_are_400(srv, field: str, value: bytes) -> None:
    body = b'{"messages": [{"role": "user", "content": "hi"}], "%s": %s}' % (field.encode(), value)
    assert assert_4xx(raw(srv, CHAT, body))["param"] == field


@pytest.mark.parametrize("field,value", [
    ("temperature", -0.1), ("temperature", 2.5), ("temperature", 1e-300), ("top_p", 1.5), ("top_p", -1),
    ("min_p", 2), ("repeat_penalty", 0), ("repeat_penalty", -1), ("top_k", -1), ("top_k", 10**30),
    ("seed", -1), ("seed", 2**64), ("max_tokens", 10**30), ("frequency_penalty", float("inf")),
])
def test_out_of_range_values_are_400(srv, field: str, value: float) -> None:
    body = json.dumps({"messages": MSG, field: value}).encode()
    if field == "max_tokens":  # clamped to the context left, as before: a huge one is not an error
        assert raw(srv, CHAT, body).status_code == 200
        return
    assert assert_4xx(raw(srv, CHAT, body))["param"] == field


def test_seed_and_top_k_in_range_are_accepted(srv) -> None:
    for extra in ({"seed": 0}, {"seed": 2**63 - 1}, {"top_k": 40}, {"temperature": 0.7, "top_p": 0.9}):
        assert raw(srv, CHAT, json.dumps({"messages": MSG} | extra).encode()).status_code == 200


@pytest.mark.parametrize("ids", [[99_999_999], [1000], [5, 2**40], [10**30]])
def test_token_ids_outside_the_vocabulary_are_400(srv, ids: list[int]) -> None:
    assert assert_4xx(raw(srv, COMPL, json.dumps({"prompt": ids}).encode()))["param"] == "prompt"


def test_token_ids_inside_the_vocabulary_are_accepted(srv) -> None:
    assert raw(srv, COMPL, json.dumps({"prompt": [0, 104, 999]}).encode()).status_code == 200


@pytest.mark.parametrize("depth", [100, 5000, 200_000])
def test_deep_nesting_is_400(srv, depth: int) -> None:
    body = b'{"messages": [{"role": "user", "content": "hi"}], "x": ' + b"[" * depth + b"]" * depth + b"}"
    assert_4xx(raw(srv, CHAT, body))


def test_a_5000_digit_integer_is_400(srv) -> None:
    body = b'{"messages": [{"role": "user", "content": "hi"}], "seed": ' + b"9" * 5000 + b"}"
    assert_4xx(raw(srv, CHAT, body))
    assert_4xx(raw(srv, COMPL, b'{"prompt": [' + b"7" * 5000 + b"]}"))


@pytest.mark.parametrize("calls", [
    [{"function": "str"}], [{"function": {"name": 5}}], [{"function": {"name": "f", "arguments": 7}}], ["x"],
])
def test_malformed_tool_calls_in_history_are_400(srv, calls: list) -> None:
    msgs = MSG + [{"role": "assistant", "content": None, "tool_calls": calls}, {"role": "tool", "content": "r"}]
    assert assert_4xx(raw(srv, CHAT, json.dumps({"messages": msgs}).encode()))["param"] == "messages"


def test_lone_surrogates_are_400_not_500(srv) -> None:
    body = b'{"messages": [{"role": "user", "content": "a\\ud800b"}]}'
    assert_4xx(raw(srv, CHAT, body))
    assert_4xx(raw(srv, "/tau/v1/tokenize", b'{"text": "\\udfff"}'))


def _slow_request(srv, path: str, declared: int) -> tuple[bytes, float]:
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    try:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  f"Content-Length: {declared}\r\n\r\n{{\"mess".encode())
        t0 = time.monotonic()
        data = b""
        while chunk := s.recv(4096):  # the server answers, then closes the connection
            data += chunk
        return data, time.monotonic() - t0
    finally:
        s.close()


def test_a_slow_body_times_out_with_408(srv) -> None:
    data, took = _slow_request(srv, CHAT, 1000)
    assert data.startswith(b"HTTP/1.1 408"), data[:200]
    assert took < 5
    assert b"request_timeout" in data


def test_many_slow_bodies_are_all_closed(srv) -> None:
    socks = []
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n{")
        socks.append(s)
    try:
        answers = [s.recv(4096) for s in socks]
    finally:
        for s in socks:
            s.close()
    assert all(a.startswith(b"HTTP/1.1 408") for a in answers)
    assert HTTP.get(srv.url + "/health").status_code == 200


def test_context_registrations_are_bounded_in_size(srv) -> None:
    assert HTTP.post(srv.url + "/tau/v1/context", json={"key": "k", "text": "ok"}).json() == {"ok": True}
    assert_4xx(HTTP.post(srv.url + "/tau/v1/context", json={"key": "k" * 2000, "text": "x"}))
    too_big = {"key": "big", "text": "x" * (2 * 1024 * 1024)}
    with ServerThread(create_app(ScriptedEngine([]), max_body_bytes=64 * 1024 * 1024)) as big:
        assert_4xx(HTTP.post(big.url + "/tau/v1/context", json=too_big), 413)


def test_a_prime_without_a_prompt_string_is_a_400(srv) -> None:
    for body in ({}, {"prompt": 3}, {"prompt": ["a"]}, {"prompt": "ok", "save": "no"}):
        assert_4xx(HTTP.post(srv.url + "/tau/v1/prime", json=body), 400)
    assert HTTP.post(srv.url + "/tau/v1/prime", json={"prompt": "ok"}).json() == {"computed": 1}


def test_drafter_sources_are_bounded_and_the_oldest_evicted(monkeypatch) -> None:
    monkeypatch.setattr(ngram, "MAX_SOURCES", 8)
    monkeypatch.setattr(ngram, "MAX_SOURCE_TOKENS", 1000)
    d = NgramDrafter()
    for i in range(20):
        d.add_source(f"k{i}", list(range(i * 10, i * 10 + 50)))
    assert d.n_sources == 8
    assert set(d._names) == {f"k{i}" for i in range(12, 20)}
    d.add_source("k12", [1, 2, 3])  # re-registering makes it the newest
    d.add_source("new", [4, 5, 6])
    assert "k12" in d._names and "k13" not in d._names
    d.add_source("huge", list(range(5000)))  # alone over the token bound: kept, truncated, the rest evicted
    assert list(d._names) == ["huge"] and len(d._sources[d._names["huge"]]) == 1000


def test_drafter_index_does_not_grow_with_evicted_sources(monkeypatch) -> None:
    monkeypatch.setattr(ngram, "MAX_SOURCES", 4)
    monkeypatch.setattr(ngram, "MAX_SOURCE_TOKENS", 2000)
    d = NgramDrafter()
    for i in range(40):
        d.add_source(f"k{i}", list(range(i * 1000, i * 1000 + 500)))
    assert sum(len(v) for v in d._index.values()) < 3 * 2 * 2000 * len(d.key_lens)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.7"])
def test_serving_on_a_public_interface_without_a_key_refuses_to_start(host: str, capsys) -> None:
    assert main(["serve", "--host", host, "--port", "0"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--api-key" in err[0] and "--allow-public" in err[0]


def test_allow_public_or_a_key_gets_past_the_refusal(capsys, tmp_path) -> None:
    missing = str(tmp_path / "nope.gguf")
    main(["serve", "--host", "0.0.0.0", "--port", "0", "--allow-public", "--model", missing])
    err = capsys.readouterr().err
    assert "refusing" not in err and "does not exist" in err  # it went on to load the model
    main(["serve", "--host", "0.0.0.0", "--port", "0", "--api-key", "k", "--model", missing])
    err = capsys.readouterr().err
    assert "refusing" not in err and "does not exist" in err
