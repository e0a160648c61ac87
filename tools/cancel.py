"""What a tool needs of a cancel token: tools know no engine, so any object with a
``cancelled`` property fits (the engine's ``CancelToken`` does, structurally)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Cancellable(Protocol):
    @property
    def cancelled(self) -> bool: ...


def is_cancelled(token: Cancellable | None) -> bool:
    return token is not None and token.cancelled
