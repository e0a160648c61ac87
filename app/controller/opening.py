"""The one way every front end opens its engine, and the one seam tests replace it through.

``tau``, ``tau --plain``, ``tau edit`` and ``tau run`` call :func:`open_engine`; a test sets
``override`` (``monkeypatch.setattr(opening, "override", make)``) to hand them a scripted engine.
"""

from __future__ import annotations

from collections.abc import Callable

from app.config import Config
from engine.types import Engine

Notify = Callable[[str], None]
Progress = Callable[[str, float], None]
EngineOpener = Callable[[Config, Notify], Engine]

override: EngineOpener | None = None  # tests: a function (cfg, notify) -> Engine


def _quiet(_message: str) -> None:
    pass


def open_engine(cfg: Config, notify: Notify | None = None, local: bool = False, *,
                progress: Progress | None = None) -> Engine:
    """The engine for ``cfg`` (see app.engines.factory), or the test override's."""
    if override is not None:
        return override(cfg, notify or _quiet)
    from app.engines.factory import open_engine as open_configured

    return open_configured(cfg, notify=notify, local=local, progress=progress)
