from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.tinymodel import write_tiny_model


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny.gguf")
