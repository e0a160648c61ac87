"""One resident model: the announce file, refusing a second server, attaching to the first."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from app import announce
from app.cli.main import main
from app.config import Config, runtime_dir
from app.engines import factory
from app.engines.remote import RemoteEngine
from engine.scripted import ScriptedEngine
from engine.types import GenerateRequest, generate

REPO = Path(__file__).resolve().parents[2]


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_claim_writes_the_file_and_release_removes_it():
    c = announce.claim("", host="127.0.0.1", port=1234, api_key=True, model_name="m")
    data = json.loads(Path(c.path).read_text())
    assert data["pid"] == os.getpid() and data["port"] == 1234 and data["api_key"] is True
    assert data["model_key"] == "default" and data["status"] == "loading"
    assert oct(Path(c.path).stat().st_mode & 0o777) == "0o600"
    c.update(status="ready", model="/models/x.gguf")
    found = announce.find_server("")
    assert found is not None and found.status == "ready" and found.model == "/models/x.gguf"
    assert found.url == "http://127.0.0.1:1234"
    c.release()
    assert not Path(c.path).exists() and announce.running_servers() == []


def test_second_claim_for_the_same_model_refuses_naming_the_first(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    with announce.announced(str(model), host="127.0.0.1", port=4321):
        with pytest.raises(announce.AlreadyServing) as e:
            announce.claim(str(model), host="127.0.0.1", port=5555)
        assert f"pid {os.getpid()}" in str(e.value) and "http://127.0.0.1:4321" in str(e.value)
        # the same file through another path spelling is the same model
        with pytest.raises(announce.AlreadyServing):
            announce.claim(str(tmp_path / "." / "m.gguf"), host="127.0.0.1", port=5555)
        # another model is fine
        announce.claim("", host="127.0.0.1", port=5556).release()
    assert announce.find_server(str(model)) is None


def test_stale_file_with_dead_pid_is_ignored_and_removed():
    d = runtime_dir()
    d.mkdir(parents=True, exist_ok=True)
    stale = d / "serve-0123456789abcdef.json"
    stale.write_text(json.dumps({"pid": dead_pid(), "host": "127.0.0.1", "port": 1, "model": "",
                                 "model_key": "default", "api_key": False}))
    (d / "serve-garbage.json").write_text("{not json")
    os.utime(d / "serve-garbage.json", (time.time() - 60, time.time() - 60))
    assert announce.find_server("") is None
    assert not stale.exists() and not (d / "serve-garbage.json").exists()
    # and a stale file under the claim's own name does not block a new server
    c = announce.claim("", host="127.0.0.1", port=2)
    Path(c.path).write_text(json.dumps({"pid": dead_pid(), "host": "h", "port": 1, "model": "",
                                        "model_key": "default", "api_key": False}))
    c2 = announce.claim("", host="127.0.0.1", port=3)
    assert announce.find_server("").port == 3
    c2.release()


def test_open_engine_attaches_to_a_running_server(serve):
    behind = ScriptedEngine(["from the server"])
    srv = serve(behind)
    notes: list[str] = []
    with announce.announced("", host="127.0.0.1", port=srv.port, status="ready"):
        eng = factory.open_engine(Config(), notify=notes.append)
        assert isinstance(eng, RemoteEngine) and eng.kind == "tau"
        assert notes == [f"attached to tau serve at {srv.url} (pid {os.getpid()})"]
        assert generate(eng, GenerateRequest(eng.chat_prompt([{"role": "user", "content": "x"}]))).text == "from the server"
        eng.close()


def test_local_flag_and_unhealthy_servers_do_not_attach(serve, monkeypatch):
    sentinel = object()
    monkeypatch.setattr(factory, "load_local", lambda cfg, progress=None: sentinel)
    srv = serve(ScriptedEngine([]))
    with announce.announced("", host="127.0.0.1", port=srv.port, status="ready"):
        assert factory.open_engine(Config(), local=True) is sentinel
    # announced, but nothing listens there (or someone else does): load in-process
    with announce.announced("", host="127.0.0.1", port=9, status="ready"):
        assert factory.open_engine(Config()) is sentinel


def test_attach_needs_the_key_of_a_protected_server(serve, monkeypatch):
    srv = serve(ScriptedEngine(["ok"]), api_key="k")
    with announce.announced("", host="127.0.0.1", port=srv.port, status="ready", api_key=True):
        with pytest.raises(factory.EngineOpenError, match="requires an API key"):
            factory.open_engine(Config())
        eng = factory.open_engine(Config(api_key="k"))
        assert generate(eng, GenerateRequest("p")).text == "ok"
        eng.close()
        monkeypatch.setenv("TAU_SERVE_API_KEY", "k")
        factory.open_engine(Config()).close()


def test_open_engine_endpoint(serve):
    srv = serve(ScriptedEngine(["via endpoint"]), tau_extensions=False, model_name="remote-m")
    notes: list[str] = []
    eng = factory.open_engine(Config(endpoint=srv.url + "/v1"), notify=notes.append)
    assert isinstance(eng, RemoteEngine) and eng.kind == "openai"
    assert notes == [f"using endpoint {srv.url} (model remote-m)"]
    assert generate(eng, GenerateRequest(eng.chat_prompt([{"role": "user", "content": "q"}]))).text == "via endpoint"
    eng.close()
    with pytest.raises(factory.EngineOpenError, match="cannot reach"):
        factory.open_engine(Config(endpoint="http://127.0.0.1:9"))


# ---- `tau serve` as a process ------------------------------------------------------------

FAKE_SERVE = """
import sys
import app.engines.factory as f
from engine.scripted import ScriptedEngine
f.open_engine = lambda *a, **k: ScriptedEngine(["hello from tau serve"] * 5, name="fake-model")
from app.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def start_serve(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", FAKE_SERVE, "serve", "--port", "0", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_ready(proc: subprocess.Popen, timeout: float = 20) -> announce.Announcement:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        for ann in announce.running_servers():
            if ann.pid == proc.pid and ann.status == "ready":
                return ann
        time.sleep(0.05)
    raise AssertionError("tau serve did not become ready")


def test_tau_serve_process_refuses_a_second_and_cleans_up():
    first = start_serve("--api-key", "sekrit")
    try:
        ann = wait_ready(first)
        assert ann.api_key is True and ann.model_name == "fake-model"
        second = start_serve()
        out, err = second.communicate(timeout=20)
        assert second.returncode == 1
        assert f"pid {first.pid}" in err and ann.url in err and "already" not in out
        eng = factory.open_engine(Config(api_key="sekrit"))
        assert generate(eng, GenerateRequest("p")).text == "hello from tau serve"
        eng.close()
    finally:
        first.send_signal(signal.SIGTERM)
        out, err = first.communicate(timeout=20)
    assert first.returncode == 0, err
    assert "stopped" in err
    assert announce.running_servers() == [] and list(runtime_dir().glob("serve-*.json")) == []


def test_tau_serve_max_tokens_caps_a_request_that_sets_none(capsys):
    proc = start_serve("--max-tokens", "2")
    try:
        ann = wait_ready(proc)
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
        req = urllib.request.Request(ann.url + "/v1/chat/completions", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=20) as resp:
            choice = json.loads(resp.read())["choices"][0]
        assert choice["message"]["content"] == "hello fr" and choice["finish_reason"] == "length"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    for bad, why in (("0", "at least 1"), ("lots", "whole number")):
        with pytest.raises(SystemExit) as e:
            main(["serve", "--port", "0", "--max-tokens", bad])
        err = capsys.readouterr().err.strip().splitlines()
        assert e.value.code == 2 and "--max-tokens" in err[-1] and why in err[-1]


def test_tau_serve_reports_a_busy_port():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        p = subprocess.run([sys.executable, "-c", FAKE_SERVE, "serve", "--port", str(s.getsockname()[1])],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=20)
    finally:
        s.close()
    assert p.returncode == 1 and "cannot listen" in p.stderr and "Traceback" not in p.stderr
    assert list(runtime_dir().glob("serve-*.json")) == []
