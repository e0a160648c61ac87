"""llama.cpp's own ``llama-server`` as the bench's peer: its plain and speculative configurations
on tau bench's workloads, in the same run, on the same model, threads and context.

Each configuration is one server process (started, asked every workload and mode, stopped);
every turn goes to ``/completion`` as the prompt text tau's own run renders, with tau's
sampling settings, and the decode speed is the server's own timing (prefill excluded), as
tau's is. The flags are those of the llama.cpp tree llama-cpp-python vendors.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.config import TAU_LLAMA_ENV

START_TIMEOUT_S = 300.0
PEER_PREFIX = "llama-"
PROBE_PROMPT = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return"  # many rows: a batched pass
NO_REPACK = ("--no-repack",)
_repack_flags: dict[tuple[str, str, int, int], tuple[str, ...]] = {}


@dataclass(frozen=True)
class PeerConfig:
    name: str
    args: tuple[str, ...]
    needs_draft: bool = False


def peer_configs(draft: str | None) -> list[PeerConfig]:
    """plain, the two n-gram speculators that did best in the side-by-side runs, and the draft model."""
    out = [
        PeerConfig("llama-plain", ()),
        PeerConfig("llama-ngram-map-k4v", ("--spec-type", "ngram-map-k4v", "--spec-ngram-map-k4v-size-n", "6")),
        PeerConfig("llama-ngram-mod", ("--spec-type", "ngram-mod")),
    ]
    if draft:
        out.append(PeerConfig("llama-draft", ("-md", draft, "--spec-type", "draft-simple", "--spec-draft-n-max", "8",
                                              "--spec-draft-p-min", "0.75"), needs_draft=True))
    return out


def find_server(path: str) -> Path:
    """The llama-server binary from a path to it or to its bin directory (ValueError otherwise)."""
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / "llama-server"
    if not p.is_file() or not os.access(p, os.X_OK):
        raise ValueError(f"--peer-server {path}: no executable llama-server there")
    return p


@dataclass(frozen=True)
class Reply:
    tokens: int
    decode_s: float  # the server's predicted_ms
    prompt_s: float  # the server's prompt_ms: prefill of what its cache did not hold
    wall_s: float
    drafted: int
    accepted: int
    token_ids: tuple[int, ...] = ()  # the reply's tokens: a greedy reply set beside tau plain's


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def peer_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without tau's own switches for its patched llama.cpp build: the peer runs as vendored."""
    return {k: v for k, v in env.items() if k not in TAU_LLAMA_ENV}


class LlamaServer:
    """One llama-server process on a free local port; a context manager."""

    def __init__(self, binary: Path, model: str, *, n_ctx: int, threads: int, gpu_layers: int,
                 extra: Sequence[str] = (), log: Path | None = None, probe: bool = True) -> None:
        self.port = _free_port()
        ngl = str(gpu_layers if gpu_layers >= 0 else 999)
        flags = repack_flags(binary, model, threads=threads, gpu_layers=gpu_layers, log=log) if probe else ()
        self.cmd = [str(binary), "-m", model, "-c", str(n_ctx), "-t", str(threads), "-tb", str(threads),
                    "-ngl", ngl, "--host", "127.0.0.1", "--port", str(self.port), "-np", "1", "--no-webui",
                    *flags, *extra]
        self.log = log
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> LlamaServer:
        err = open(self.log, "w") if self.log else subprocess.DEVNULL  # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                                     env=peer_env(os.environ))
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.proc.returncode} (log: {self.log})")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        self.__exit__()
        raise RuntimeError(f"llama-server did not come up in {START_TIMEOUT_S:.0f} s (log: {self.log})")

    def __exit__(self, *_exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None

    def post(self, path: str, body: dict) -> tuple[dict, float]:
        """The server's JSON answer to ``body`` at ``path``, and the request's wall seconds."""
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=1800) as r:
            out = json.load(r)
        return out, time.perf_counter() - t0

    def complete(self, prompt: str, max_tokens: int, temperature: float, top_p: float, seed: int | None,
                 top_k: int = 0, min_p: float = 0.0) -> Reply:
        # temperature and top_p, as ../shared/peers/llama_server_bench.py sends; the server's own top_k and
        # min_p stay unless a mode sets them (zeroing them sorted the whole vocabulary on the host: 4.4 ms a
        # token, not 2.2, on an H100)
        body = {
            "prompt": prompt, "n_predict": max_tokens, "temperature": temperature, "top_p": top_p,
            "seed": 1234 if seed is None else seed,
            "cache_prompt": True, "stream": False, "return_tokens": True,
            **({"top_k": top_k} if top_k > 0 else {}), **({"min_p": min_p} if min_p > 0 else {}),
        }
        out, wall = self.post("/completion", body)
        tm = out.get("timings", {})
        return Reply(int(tm.get("predicted_n", out.get("tokens_predicted", 0))), float(tm.get("predicted_ms", 0.0)) / 1e3,
                     float(tm.get("prompt_ms", 0.0)) / 1e3, wall, int(tm.get("draft_n", 0) or 0),
                     int(tm.get("draft_n_accepted", 0) or 0), tuple(int(t) for t in out.get("tokens") or ()))



def repack_flags(binary: Path, model: str, *, threads: int, gpu_layers: int, log: Path | None = None) -> tuple[str, ...]:
    """The flags that keep llama-server alive on this machine, found once per binary and model: none
    where its default repacked weights answer a batched prompt, ``--no-repack`` where they crash
    (llama.cpp's AMX kernels die of SIGILL in some VMs), so the peer is what a user here can run."""
    key = (str(binary), model, threads, gpu_layers)
    if key not in _repack_flags:
        probe_log = log.with_name(log.stem + "-repack-probe.log") if log else None
        try:
            with LlamaServer(binary, model, n_ctx=512, threads=threads, gpu_layers=gpu_layers, log=probe_log,
                             probe=False) as srv:
                srv.complete(PROBE_PROMPT, 2, 0.0, 1.0, None)
            _repack_flags[key] = ()
        except (RuntimeError, OSError, ValueError):  # died at start or on the batch (URLError and resets are OSErrors)
            _repack_flags[key] = NO_REPACK
    return _repack_flags[key]


def used_repack_flags() -> dict[tuple[str, str, int, int], tuple[str, ...]]:
    """What each probed (binary, model, threads, layers) was found to need, for the bench's JSON."""
    return dict(_repack_flags)


def run_configs(binary: Path, model: str, draft: str | None, *, n_ctx: int, threads: int, gpu_layers: int,
                ask: Callable[[PeerConfig, LlamaServer], None], log_dir: Path | None = None,
                plain_last: bool = False) -> None:
    """Start each configuration's server in turn and let ``ask`` put every workload to it; ``plain_last``:
    in reverse order, plain last."""
    configs = peer_configs(draft)
    for pc in reversed(configs) if plain_last else configs:
        log = (log_dir / f"{pc.name}.log") if log_dir else None
        with LlamaServer(binary, model, n_ctx=n_ctx, threads=threads, gpu_layers=gpu_layers, extra=pc.args,
                         log=log) as srv:
            ask(pc, srv)
