"""Bad requests get 4xx answers with an OpenAI-style error body, never a crash."""

from __future__ import annotations

import httpx
import openai
import pytest

from app.server import ServerThread, create_app
from engine.scripted import ScriptedEngine
from engine.types import GenStats

CHAT = "/v1/chat/completions"
MSG = [{"role": "user", "content": "hi"}]


def error_of(resp: httpx.Response, status: int) -> dict:
    assert resp.status_code == status, resp.text
    body = resp.json()
    err = body["error"]
    assert isinstance(err["message"], str) and err["message"]
    assert set(err) == {"message", "type", "param", "code"}
    return err


HTTP = httpx.Client(timeout=10, trust_env=False)


@pytest.fixture(scope="module")
def srv():
    with ServerThread(create_app(ScriptedEngine(["fine"] * 200, n_ctx=300), max_body_bytes=20_000)) as s:
        yield s


def post(srv, path: str, **kw) -> httpx.Response:
    return HTTP.post(srv.url + path, **kw)


def test_malformed_json(srv):
    err = error_of(post(srv, CHAT, content=b"{not json", headers={"content-type": "application/json"}), 400)
    assert "not valid JSON" in err["message"] and err["type"] == "invalid_request_error"
    error_of(post(srv, CHAT, content=b"[1, 2]"), 400)
    error_of(post(srv, CHAT, content=b""), 400)
    error_of(post(srv, CHAT, content=b"\xff\xfe"), 400)


def test_any_model_name_gets_the_resident_model_and_the_answer_names_it(srv):
    # as llama-server does: clients that insist on their own model name (aider's "openai/gpt-4o") just work
    for path, body in ((CHAT, {"model": "gpt-4o", "messages": MSG}), ("/v1/completions", {"model": "x", "prompt": "a"})):
        resp = post(srv, path, json=body)
        assert resp.status_code == 200 and resp.json()["model"] == "scripted"
    r = openai.OpenAI(base_url=srv.url + "/v1", api_key="x", max_retries=0).chat.completions.create(
        model="nope", messages=MSG, stream=True)
    assert {c.model for c in r} == {"scripted"}
    error_of(post(srv, CHAT, json={"model": 7, "messages": MSG}), 400)


def test_strict_model_refuses_unknown_names(serve):
    srv = serve(ScriptedEngine(["a", "b"]), strict_model=True)
    err = error_of(post(srv, CHAT, json={"model": "gpt-4o", "messages": MSG}), 404)
    assert err["code"] == "model_not_found" and "gpt-4o" in err["message"]
    with pytest.raises(openai.NotFoundError):
        openai.OpenAI(base_url=srv.url + "/v1", api_key="x", max_retries=0).chat.completions.create(
            model="nope", messages=MSG)
    assert post(srv, CHAT, json={"model": "tau", "messages": MSG}).status_code == 200


def test_known_aliases_and_missing_model_are_accepted(srv):
    for model in ("scripted", "tau", None):
        body = {"messages": MSG} | ({"model": model} if model else {})
        assert post(srv, CHAT, json=body).status_code == 200


def test_oversized_body(srv):
    big = {"model": "scripted", "messages": [{"role": "user", "content": "x" * 30_000}]}
    err = error_of(post(srv, CHAT, json=big), 413)
    assert err["code"] == "request_too_large"

    def chunks():  # no Content-Length: the limit holds while reading
        for _ in range(30):
            yield b" " * 1000

    error_of(post(srv, CHAT, content=chunks()), 413)


def test_prompt_longer_than_context(srv):
    err = error_of(post(srv, CHAT, json={"model": "scripted", "messages": [{"role": "user", "content": "y" * 4000}]}), 400)
    assert err["code"] == "context_length_exceeded" and "300" in err["message"]
    with pytest.raises(openai.BadRequestError):
        openai.OpenAI(base_url=srv.url + "/v1", api_key="x", max_retries=0).completions.create(
            model="scripted", prompt="z" * 4000)


def test_max_tokens_is_clamped_to_the_context_left(serve):
    eng = ScriptedEngine(["ok"], n_ctx=300)
    srv = serve(eng)
    assert post(srv, CHAT, json={"messages": MSG, "max_tokens": 100_000}).status_code == 200
    assert eng.requests[0].max_tokens == 300 - eng.count_tokens(eng.prompts[0])


@pytest.mark.parametrize("body,param", [
    ({"messages": "hi"}, "messages"),
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "wizard", "content": "x"}]}, "messages"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}, "messages"),
    ({"messages": MSG, "temperature": "hot"}, "temperature"),
    ({"messages": MSG, "temperature": 5}, "temperature"),
    ({"messages": MSG, "max_tokens": 0}, "max_tokens"),
    ({"messages": MSG, "max_tokens": 1.5}, "max_tokens"),
    ({"messages": MSG, "n": 3}, "n"),
    ({"messages": MSG, "stop": 7}, "stop"),
    ({"messages": MSG, "stream": "yes"}, "stream"),
    ({"messages": MSG, "spec": "warp"}, "spec"),
    ({"messages": MSG, "tools": [{"type": "function"}]}, "tools"),
])
def test_invalid_fields(srv, body, param):
    err = error_of(post(srv, CHAT, json=body), 400)
    assert err["param"] == param


def test_bad_completion_prompts(srv):
    for prompt in (None, 5, ["a", "b"], [1, -2], {"x": 1}):
        error_of(post(srv, "/v1/completions", json={"prompt": prompt}), 400)
    assert post(srv, "/v1/completions", json={"prompt": [104, 105]}).status_code == 200


def test_unknown_route_and_method(srv):
    error_of(HTTP.get(srv.url + "/v1/nothing"), 404)
    error_of(HTTP.get(srv.url + CHAT), 405)


def test_api_key(serve):
    srv = serve(ScriptedEngine(["a", "b"]), api_key="s3cret")
    err = error_of(post(srv, CHAT, json={"messages": MSG}), 401)
    assert err["code"] == "invalid_api_key"
    error_of(post(srv, CHAT, json={"messages": MSG}, headers={"Authorization": "Bearer wrong"}), 401)
    error_of(HTTP.get(srv.url + "/v1/models", headers={"Authorization": "Basic s3cret"}), 401)
    error_of(HTTP.get(srv.url + "/tau/v1/info"), 401)
    assert HTTP.get(srv.url + "/health").status_code == 200  # liveness stays open
    ok = openai.OpenAI(base_url=srv.url + "/v1", api_key="s3cret", max_retries=0)
    assert ok.chat.completions.create(model="scripted", messages=MSG).choices[0].message.content == "a"
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=srv.url + "/v1", api_key="nope", max_retries=0).models.list()


class ExplodingEngine(ScriptedEngine):
    def stream(self, request, cancel=None):
        if "boom" in str(request.prompt):
            raise RuntimeError("kaboom\nwith a second line")
        yield from super().stream(request, cancel)


def test_engine_failures_are_500s_and_the_server_keeps_serving(serve):
    eng = ExplodingEngine(["after the storm"])
    srv = serve(eng)
    c = openai.OpenAI(base_url=srv.url + "/v1", api_key="x", max_retries=0)
    err = error_of(post(srv, CHAT, json={"messages": [{"role": "user", "content": "boom"}]}), 500)
    assert err["type"] == "server_error" and "kaboom" in err["message"] and "\n" not in err["message"]
    with pytest.raises(openai.APIError):  # in a stream: an error event
        list(c.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "boom"}], stream=True))
    r = c.chat.completions.create(model="scripted", messages=MSG)
    assert r.choices[0].message.content == "after the storm"
    # a scripted engine with no reply left ends in DoneEvent(error): also a clean 500
    err = error_of(post(srv, CHAT, json={"messages": MSG}), 500)
    assert "no reply left" in err["message"]
    metrics = HTTP.get(srv.url + "/metrics").text
    assert 'tau_generations_total{finish_reason="error"} 3' in metrics
    assert isinstance(GenStats().to_dict(), dict)


def test_web_pages_cannot_drive_the_model(serve):
    from app.server.app import LOOPBACK_NAMES

    srv = serve(ScriptedEngine(["a"] * 5), allowed_hosts=LOOPBACK_NAMES)
    body = {"messages": MSG}
    err = error_of(post(srv, CHAT, json=body, headers={"Origin": "https://evil.example"}), 403)
    assert err["code"] == "origin_not_allowed"
    # DNS rebinding: the browser talks to 127.0.0.1 but says Host: evil.example
    err = error_of(post(srv, CHAT, json=body, headers={"Host": "evil.example:8686"}), 403)
    assert err["code"] == "host_not_allowed"
    assert post(srv, CHAT, json=body, headers={"Origin": f"http://localhost:{srv.port}"}).status_code == 200
    assert post(srv, CHAT, json=body, headers={"Host": f"localhost:{srv.port}"}).status_code == 200
    assert post(srv, CHAT, json=body, headers={"Host": f"[::1]:{srv.port}"}).status_code == 200
    # with an API key, an authenticated request from a page is the user's choice
    keyed = serve(ScriptedEngine(["b"]), api_key="k")
    ok = post(keyed, CHAT, json=body, headers={"Origin": "https://app.example", "Authorization": "Bearer k"})
    assert ok.status_code == 200


class BrokenTextEngine(ScriptedEngine):
    """Yields a token event whose text is not a string: the stream's own code fails mid-answer."""

    def stream(self, request, cancel=None):
        from engine.types import DoneEvent, TokenEvent

        yield TokenEvent("ok ", (1,))
        yield TokenEvent(None, (2,))  # type: ignore[arg-type]
        yield DoneEvent("ok ", (1, 2), "stop", GenStats())


def test_a_failure_mid_stream_ends_in_an_error_event_and_the_server_keeps_serving(serve):
    srv = serve(BrokenTextEngine(["after"]))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    with HTTP.stream("POST", srv.url + CHAT, json={"messages": MSG, "tools": tools, "stream": True}) as r:
        text = "".join(r.iter_text())
    assert '"code":"stream_error"' in text and text.rstrip().endswith("data: [DONE]")
    assert HTTP.get(srv.url + "/health").status_code == 200
