"""tau serve stops a reply caught in a loop (the same block again and again, what a small model writes to the
end of the context when a client sets no max_tokens): the reply ends with its first copy, finish "stop"
on the wire and "loop" in the request log; ``loop_stop=False`` (``--keep-loops``) lets it run."""

from __future__ import annotations

import json

import httpx

from engine.scripted import ScriptedEngine

FUNC = (
    "def median(values):\n    ordered = sorted(values)\n    n = len(ordered)\n    mid = n // 2\n"
    "    if n % 2:\n        return ordered[mid]\n    return (ordered[mid - 1] + ordered[mid]) / 2\n\n\n"
)
LOOPING = "Here is the function:\n```python\n" + FUNC * 60
BODY = {"model": "x", "messages": [{"role": "user", "content": "write median"}], "temperature": 0.6}


def test_a_looping_reply_ends_with_its_first_copy(serve):
    lines: list[str] = []
    srv = serve(ScriptedEngine([LOOPING, LOOPING]), request_log=lines.append)
    r = httpx.post(srv.url + "/v1/chat/completions", json=BODY, timeout=30)
    choice = r.json()["choices"][0]
    assert choice["finish_reason"] == "stop"
    content = choice["message"]["content"]
    assert content.startswith("Here is the function:\n```python\ndef median") and content.count("def median") == 1
    # the engine was stopped soon after the third copy, not run to the end of the 60
    assert r.json()["usage"]["completion_tokens"] < len(LOOPING) // 4 // 10
    assert lines[1].startswith("#1 loop: ")
    # streamed: nothing after the third copy reaches the client, and the last chunk says stop
    text, finish = "", None
    with httpx.stream("POST", srv.url + "/v1/chat/completions", json={**BODY, "stream": True}, timeout=30) as resp:
        for line in resp.iter_lines():
            if line.startswith("data: {"):
                ch = json.loads(line[6:])["choices"][0]
                text += ch["delta"].get("content") or ""
                finish = ch["finish_reason"] or finish
    assert finish == "stop" and 3 <= text.count("def median") <= 4


def test_keep_loops_lets_the_reply_run(serve):
    srv = serve(ScriptedEngine([LOOPING]), loop_stop=False)
    r = httpx.post(srv.url + "/v1/chat/completions", json=BODY, timeout=30)
    assert r.json()["choices"][0]["message"]["content"].count("def median") == 60
