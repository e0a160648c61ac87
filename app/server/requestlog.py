"""One line as the engine takes a request and one as it ends, for ``tau serve``'s log.

A request that runs long (a model in a loop, a client without ``max_tokens``) shows its start
line with no end; an ended one says why it ended, how much it wrote and how fast.
"""

from __future__ import annotations

import time

from app.server.worker import Job
from engine.types import DoneEvent


def start_line(job: Job) -> str:
    r = job.request
    waited = (job.started_at or job.enqueued_at) - job.enqueued_at
    parts = [f"#{job.seq} started", f"max_tokens {r.max_tokens}", f"temperature {r.sampling.temperature:g}"]
    if job.n_prompt is not None:  # counted by the server as it admitted the request
        parts.insert(1, f"prompt {job.n_prompt} tokens")
    if waited >= 0.05:
        parts.append(f"queued {waited:.1f} s")
    return ", ".join(parts)


def done_line(job: Job, done: DoneEvent) -> str:
    if job.started_at is None:
        return f"#{job.seq} {done.finish_reason} before it started"
    st = done.stats
    took = time.monotonic() - job.started_at
    line = (f"#{job.seq} {done.finish_reason}: {st.completion_tokens} tokens in {took:.1f} s, "
            f"prompt {st.prompt_tokens} tokens ({st.reused_tokens} reused)")
    if st.decode_tok_s > 0:
        line += f", decode {st.decode_tok_s:.1f} tok/s, τ {st.tau:.2f}"
    if done.error:
        line += f"; {done.error}"
    return line
