"""tau serve's request log: a line as the engine takes a request and one as it ends."""

from __future__ import annotations

import re
import threading
import time

import httpx

from engine.scripted import ScriptedEngine


def test_each_request_logs_its_start_and_its_end_with_what_it_wrote(serve):
    lines: list[str] = []
    eng = ScriptedEngine(["Hello there, how can I help?", "0123456789abcdef"])
    srv = serve(eng, request_log=lines.append, default_max_tokens=2)
    body = {"model": "x", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 50, "temperature": 0.6}
    r = httpx.post(srv.url + "/v1/chat/completions", json=body, timeout=30)
    assert r.status_code == 200
    n_prompt = r.json()["usage"]["prompt_tokens"]
    r = httpx.post(srv.url + "/v1/completions", json={"prompt": "p"}, timeout=30)  # no max_tokens: the server's cap
    assert r.json()["choices"][0]["finish_reason"] == "length"
    assert lines[0] == f"#1 started, prompt {n_prompt} tokens, max_tokens 50, temperature 0.6"
    assert re.fullmatch(rf"#1 stop: 7 tokens in \d+\.\d s, prompt {n_prompt} tokens \(0 reused\)"
                        r", decode [\d.]+ tok/s, τ 2\.33", lines[1]), lines[1]  # scripted τ 2.5: 7 tokens, 3 passes
    assert lines[2].startswith("#2 started, prompt ") and ", max_tokens 2," in lines[2]
    assert lines[3].startswith("#2 length: 2 tokens in ")
    assert len(lines) == 4


def test_a_request_still_running_shows_its_start_line_and_a_cancelled_one_its_end(serve):
    lines: list[str] = []
    srv = serve(ScriptedEngine(["z" * 40_000], delay=0.002), request_log=lines.append)
    body = {"prompt": "p", "stream": True}

    def client() -> None:
        with httpx.stream("POST", srv.url + "/v1/completions", json=body, timeout=30) as resp:
            for i, _ in enumerate(resp.iter_lines()):
                if i > 20:
                    return  # hang up mid-reply

    t = threading.Thread(target=client)
    t.start()
    deadline = time.time() + 10
    while not lines and time.time() < deadline:
        time.sleep(0.01)
    assert lines and lines[0].startswith("#1 started")  # logged before any end: a runaway shows here
    t.join(10)
    while len(lines) < 2 and time.time() < deadline:
        time.sleep(0.01)
    assert lines[1].startswith("#1 cancelled: ")


def test_tau_serve_logs_requests_on_stderr_unless_quiet(monkeypatch, capsys):
    import pytest

    import app.server as server_pkg
    from app.cli.main import main
    from app.engines import factory

    class Stop(Exception):
        pass

    logs = []

    def fake_create_app(engine, **kw):
        logs.append(kw["request_log"])
        raise Stop

    monkeypatch.setattr(factory, "open_engine", lambda *a, **k: ScriptedEngine([]))
    monkeypatch.setattr(server_pkg, "create_app", fake_create_app)
    for argv in (["serve", "--port", "0"], ["serve", "--port", "0", "--quiet"]):
        with pytest.raises(Stop):
            main(argv)
    assert logs[1] is None
    logs[0]("#1 started, max_tokens 5")
    assert "tau serve: #1 started, max_tokens 5\n" in capsys.readouterr().err
