"""Running the app with uvicorn: in a background thread (tests, load test) or in the foreground."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from typing import Any

import uvicorn


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind (and listen on) host:port; port 0 picks a free one. Raises OSError with errno."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _config(app: Any, log_level: str) -> uvicorn.Config:
    return uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="on",
                          timeout_graceful_shutdown=3, ws="none")


class ServerThread:
    """uvicorn serving ``app`` on 127.0.0.1 (free port by default) in a daemon thread.

    Use as a context manager; ``url`` is ``http://127.0.0.1:PORT``.
    """

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning") -> None:
        self.sock = bind_socket(host, port)
        self.host = host
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(_config(app, log_level))
        self.thread = threading.Thread(target=self._run, name=f"uvicorn-{self.port}", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    def start(self, timeout: float = 10.0) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)
        with contextlib.suppress(OSError):
            self.sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_foreground(app: Any, sock: socket.socket, log_level: str = "info") -> None:
    """Serve until SIGINT/SIGTERM (uvicorn's own signal handling)."""
    server = uvicorn.Server(_config(app, log_level))
    server.run(sockets=[sock])
