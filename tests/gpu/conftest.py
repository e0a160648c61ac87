from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from engine.lab.gpu.synthetic import write_synthetic

    return write_synthetic("tiny", tmp_path_factory.mktemp("synth") / "synthetic-tiny.gguf")
