from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.tinymodel import write_tiny_model


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny.gguf")


@pytest.fixture(scope="module")
def tiny(tiny_gguf: Path):
    """The tiny model and one context on it (CPU, one thread); tests clear the cache themselves."""
    from engine import backend

    model = backend.Model(str(tiny_gguf), gpu_layers=0)
    ctx = backend.Context(model, n_ctx=256, n_batch=64, threads=1)
    yield model, ctx
    ctx.close()
    model.close()


@pytest.fixture
def tiny_engine(tmp_path: Path):
    """A LocalEngine on a tiny byte-fallback model (any text tokenizes), drafting with itself."""
    from engine.config import EngineConfig
    from engine.local import LocalEngine
    from tests.engine.tinymodel import write_tiny_model

    model = str(write_tiny_model(tmp_path / "tiny-bytes.gguf", vocab=300, byte_fallback=True))
    eng = LocalEngine.load(
        EngineConfig(model_path=model, draft_model_path=model, n_ctx=512, threads=1,
                     cache_dir=str(tmp_path), log_path=str(tmp_path / "llama.log"))
    )
    yield eng
    eng.close()
