"""The HTTP side of the remote engine: URLs, error bodies, tau's stats and cancellation."""

from __future__ import annotations

import re
import socket
import threading
from typing import Any

import httpx

from app.wire.chatml import parse_prompt as parse_chatml  # noqa: F401  (the name callers import)
from engine.types import CancelToken, GenStats


def root_of(url: str) -> str:
    url = url.strip().rstrip("/")
    if not re.match(r"^https?://", url):
        url = "http://" + url
    for suffix in ("/chat/completions", "/completions", "/v1"):
        if url.endswith(suffix):
            url = url[: -len(suffix)]
    return url.rstrip("/")


def error_text(resp: httpx.Response) -> str:
    try:
        data = resp.json()
        err = data.get("error", data) if isinstance(data, dict) else data
        msg = err.get("message") if isinstance(err, dict) else err
        return f"HTTP {resp.status_code}: {msg}"
    except Exception:
        return f"HTTP {resp.status_code}: {resp.text[:200].strip()}"


def stats_from_dict(d: dict) -> GenStats:
    """GenStats from ``GenStats.to_dict()`` output (derived rates are recomputed)."""

    def num(k: str, cast: type = float) -> Any:
        v = d.get(k, 0)
        try:
            return cast(v)
        except (TypeError, ValueError):
            return cast(0)

    return GenStats(
        prompt_tokens=num("prompt_tokens", int),
        reused_tokens=num("reused_tokens", int),
        completion_tokens=num("completion_tokens", int),
        prefill_s=num("prefill_s"),
        decode_s=num("decode_s"),
        wall_s=num("wall_s"),
        verify_passes=num("verify_passes", int),
        drafted={str(k): int(v) for k, v in (d.get("drafted") or {}).items()},
        accepted={str(k): int(v) for k, v in (d.get("accepted") or {}).items()},
        accept_by_pos=tuple(float(x) for x in (d.get("accept_by_pos") or ())),
        ceiling_tok_s=num("ceiling_tok_s"),
        near_tie_divergences=num("near_tie_divergences", int),
        first_token_s=num("first_token_s"),
        emitted_tokens=num("emitted_tokens", int),  # tau's numerator: without it an attached TUI showed 0.99 for 1.00
    )


class CancelWatch:
    """Shuts the response's socket down when ``cancel`` fires, so a blocked read returns at once."""

    def __init__(self, cancel: CancelToken | None) -> None:
        self.cancel = cancel
        self.sock: socket.socket | None = None
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def attach(self, resp: httpx.Response) -> None:
        if self.cancel is None:
            return
        stream = resp.extensions.get("network_stream")
        self.sock = stream.get_extra_info("socket") if stream is not None else None
        self.thread = threading.Thread(target=self._run, name="tau-remote-cancel", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        assert self.cancel is not None
        while not self.stop.wait(0.05):
            if self.cancel.cancelled:
                if self.sock is not None:
                    try:
                        self.sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return

    def close(self) -> None:
        self.stop.set()


def client_stats(t0: float, first: float | None, now: float, n_chunks: int, usage: dict, timings: dict) -> GenStats:
    """Stats measured here, overridden by what the server reports (usage, llama-server timings)."""
    prompt_tokens = int(usage.get("prompt_tokens") or timings.get("prompt_n") or 0)
    completion = int(usage.get("completion_tokens") or timings.get("predicted_n") or n_chunks)
    cached = int(((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or timings.get("cache_n") or 0)
    prefill_s = (first - t0) if first is not None else now - t0
    decode_s = (now - first) if first is not None else 0.0
    if timings.get("prompt_ms") is not None:
        prefill_s = float(timings["prompt_ms"]) / 1000.0
    if timings.get("predicted_ms") is not None:
        decode_s = float(timings["predicted_ms"]) / 1000.0
    drafted: dict[str, int] = {}
    accepted: dict[str, int] = {}
    passes = 0
    if timings.get("draft_n"):
        drafted["server"] = int(timings["draft_n"])
        accepted["server"] = int(timings.get("draft_n_accepted") or 0)
        passes = max(1, completion - accepted["server"])
    return GenStats(prompt_tokens=prompt_tokens, reused_tokens=cached, completion_tokens=completion,
                    prefill_s=prefill_s, decode_s=decode_s, wall_s=now - t0, verify_passes=passes,
                    drafted=drafted, accepted=accepted)
