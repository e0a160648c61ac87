"""Server counters, rendered in Prometheus' text exposition format at ``/metrics``."""

from __future__ import annotations

import threading
import time
from collections import Counter

from engine.types import GenStats
from engine.types import tau as tau_of


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Metrics:
    def __init__(self, model: str = "", backend: str = "", n_ctx: int = 0) -> None:
        self._lock = threading.Lock()
        self.started = time.time()
        self.model = model
        self.backend = backend
        self.n_ctx = n_ctx
        self.requests: Counter[tuple[str, int]] = Counter()
        self.finishes: Counter[str] = Counter()
        self.prompt_tokens = 0
        self.reused_tokens = 0
        self.completion_tokens = 0
        self.emitted_tokens = 0  # tau's numerator (engine.types.tau)
        self.verify_passes = 0
        self.prefill_s = 0.0
        self.decode_s = 0.0
        self.wall_s = 0.0
        self.disconnects = 0
        self.last: GenStats | None = None
        self.queue_length = 0  # waiting, not running
        self.busy = 0

    def request(self, endpoint: str, status: int) -> None:
        with self._lock:
            self.requests[(endpoint, status)] += 1

    def disconnect(self) -> None:
        with self._lock:
            self.disconnects += 1

    def generation(self, finish_reason: str, stats: GenStats) -> None:
        with self._lock:
            self.finishes[finish_reason] += 1
            self.prompt_tokens += stats.prompt_tokens
            self.reused_tokens += stats.reused_tokens
            self.completion_tokens += stats.completion_tokens
            self.emitted_tokens += stats.emitted
            self.verify_passes += stats.verify_passes
            self.prefill_s += stats.prefill_s
            self.decode_s += stats.decode_s
            self.wall_s += stats.wall_s
            if stats.completion_tokens:
                self.last = stats

    def render(self) -> str:
        with self._lock:
            out: list[str] = []

            def metric(name: str, kind: str, help_: str, samples: list[tuple[str, float]]) -> None:
                out.append(f"# HELP {name} {help_}")
                out.append(f"# TYPE {name} {kind}")
                for labels, value in samples:
                    v = f"{value:.6g}" if isinstance(value, float) else str(value)
                    out.append(f"{name}{labels} {v}")

            metric("tau_model_info", "gauge", "The model this server runs.",
                   [(f'{{model="{_esc(self.model)}",backend="{_esc(self.backend)}"}}', 1)])
            metric("tau_context_length", "gauge", "Context window (tokens).", [("", self.n_ctx)])
            metric("tau_uptime_seconds", "gauge", "Seconds since the server started.",
                   [("", round(time.time() - self.started, 3))])
            metric("tau_requests_total", "counter", "HTTP requests by endpoint and status.",
                   [(f'{{endpoint="{_esc(e)}",status="{s}"}}', n) for (e, s), n in sorted(self.requests.items())])
            metric("tau_generations_total", "counter", "Finished generations by finish reason.",
                   [(f'{{finish_reason="{_esc(r)}"}}', n) for r, n in sorted(self.finishes.items())])
            metric("tau_client_disconnects_total", "counter", "Requests whose client went away before the end.",
                   [("", self.disconnects)])
            metric("tau_prompt_tokens_total", "counter", "Prompt tokens processed.", [("", self.prompt_tokens)])
            metric("tau_reused_tokens_total", "counter", "Prompt tokens served from the KV cache.",
                   [("", self.reused_tokens)])
            metric("tau_completion_tokens_total", "counter", "Tokens generated.", [("", self.completion_tokens)])
            metric("tau_verify_passes_total", "counter", "Target-model decode passes.", [("", self.verify_passes)])
            metric("tau_prefill_seconds_total", "counter", "Seconds spent in prefill.", [("", float(self.prefill_s))])
            metric("tau_decode_seconds_total", "counter", "Seconds spent decoding.", [("", float(self.decode_s))])
            tau = tau_of(self.emitted_tokens, self.verify_passes)
            tps = self.completion_tokens / self.decode_s if self.decode_s > 0 else 0.0
            metric("tau_tau", "gauge", "Tokens per verify pass over all generations.", [("", float(tau))])
            metric("tau_decode_tokens_per_second", "gauge", "Decode speed over all generations.", [("", float(tps))])
            last = self.last or GenStats()
            metric("tau_last_tau", "gauge", "Tokens per verify pass of the last generation.", [("", float(last.tau))])
            metric("tau_last_decode_tokens_per_second", "gauge", "Decode speed of the last generation.",
                   [("", float(last.decode_tok_s))])
            metric("tau_last_prefill_tokens_per_second", "gauge", "Prefill speed of the last generation.",
                   [("", float(last.prefill_tok_s))])
            metric("tau_last_ceiling_fraction", "gauge", "Last decode speed / memory-bandwidth ceiling.",
                   [("", float(last.ceiling_frac))])
            metric("tau_queue_length", "gauge", "Requests waiting for the engine.", [("", self.queue_length)])
            metric("tau_busy", "gauge", "1 while a generation runs.", [("", self.busy)])
            return "\n".join(out) + "\n"
