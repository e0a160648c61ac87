"""Fixtures for the server tests: isolated tau dirs and servers on free loopback ports."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.server import ServerThread, create_app
from engine.types import Engine


@pytest.fixture(autouse=True)
def _isolated_dirs(request, tmp_path, monkeypatch) -> None:
    names = ["RUNTIME", "STATE", "CONFIG"]
    if request.node.get_closest_marker("real_model") is None:
        names.append("CACHE")  # real-model tests keep the user's cache: the assembled model pack lives there
    for name in names:
        d = tmp_path / name.lower()
        d.mkdir()
        monkeypatch.setenv(f"TAU_{name}_DIR", str(d))
    monkeypatch.delenv("TAU_SERVE_API_KEY", raising=False)


@pytest.fixture
def serve() -> Iterator[Callable[..., ServerThread]]:
    """serve(engine, **create_app_kwargs) -> a started ServerThread (stopped at teardown)."""
    started: list[ServerThread] = []

    def start(engine: Engine, **kw: Any) -> ServerThread:
        srv = ServerThread(create_app(engine, **kw)).start()
        srv.app_state = srv.server.config.app.state  # type: ignore[attr-defined]
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()
