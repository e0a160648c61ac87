"""engine_config / open_engine: config mapping and one-line errors for bad model files."""

from __future__ import annotations

import struct
import sys
import types
from pathlib import Path

import pytest

from app.config import Config
from app.engines import factory


def test_engine_config_maps_the_app_config(tmp_path):
    model = tmp_path / "m.gguf"
    cfg = Config(model=str(model), draft_model="none", n_ctx=4096, n_batch=256, threads=3, gpu_layers=0,
                 flash_attn=True, cpu_extra_buffers=True, kv_type="q8_0", spec="ngram", ngram_key=4, max_window=12,
                 memory_bandwidth_gbs=50.0)
    ec = factory.engine_config(cfg)
    assert ec.model_path == str(model) and ec.draft_model_path is None
    assert (ec.n_ctx, ec.n_batch, ec.threads, ec.gpu_layers) == (4096, 256, 3, 0)
    assert (ec.flash_attn, ec.kv_type, ec.spec, ec.ngram_key, ec.max_window) == (True, "q8_0", "ngram", 4, 12)
    assert ec.cpu_extra_buffers is True
    assert ec.memory_bandwidth_gbs == 50.0
    assert Path(ec.cache_dir) == tmp_path / "cache"  # TAU_CACHE_DIR (conftest)
    assert Path(ec.log_path) == tmp_path / "state" / "llama.log"


def test_default_pack_paths(monkeypatch, tmp_path):
    import engine.modelpack as mp

    monkeypatch.setattr(mp, "default_target_path", lambda progress=None: tmp_path / "target.gguf")
    monkeypatch.setattr(mp, "default_draft_path", lambda progress=None: tmp_path / "draft.gguf")
    ec = factory.engine_config(Config())
    assert ec.model_path == str(tmp_path / "target.gguf") and ec.draft_model_path == str(tmp_path / "draft.gguf")
    assert factory.engine_config(Config(draft_model="none")).draft_model_path is None
    assert factory.engine_config(Config(draft_model="/d.gguf")).draft_model_path == "/d.gguf"
    # a custom target gets no default draft (the pack's draft shares the pack target's vocabulary)
    assert factory.engine_config(Config(model="/t.gguf")).draft_model_path is None


def test_missing_default_pack_is_one_line(monkeypatch):
    import engine.modelpack as mp

    def boom(progress=None):
        raise mp.ModelPackError("the default target model is not installed;\ninstall it with pip")

    monkeypatch.setattr(mp, "default_target_path", boom)
    with pytest.raises(factory.EngineOpenError) as e:
        factory.open_engine(Config(), local=True)
    assert "default model pack" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("content,msg", [
    (None, "does not exist"),
    (b"PK\x03\x04 a zip, not a model", "not a GGUF file"),
    (b"GGUF" + struct.pack("<I", 3) + struct.pack("<Q", 10) + struct.pack("<Q", 5), "truncated"),
])
def test_bad_model_files_are_one_line_errors(tmp_path, content, msg):
    model = tmp_path / "model.gguf"
    if content is not None:
        model.write_bytes(content)
    with pytest.raises(factory.EngineOpenError) as e:
        factory.open_engine(Config(model=str(model), draft_model="none"), local=True)
    assert msg in str(e.value) and str(model) in str(e.value) and "\n" not in str(e.value)


def test_bad_draft_file(tmp_path, monkeypatch):
    target = tmp_path / "t.gguf"
    target.write_bytes(b"GGUF")
    check = factory._check_model_file
    monkeypatch.setattr(factory, "_check_model_file", lambda p, what: None if what == "model" else check(p, what))
    with pytest.raises(factory.EngineOpenError, match="draft model .* does not exist"):
        factory.open_engine(Config(model=str(target), draft_model=str(tmp_path / "nope.gguf")), local=True)


class FakeLocalEngine:
    loaded: list = []

    @classmethod
    def load(cls, cfg, progress=None):
        if "explode" in cfg.model_path:
            raise RuntimeError("llama_model_load: failed\nsecond line")
        cls.loaded.append((cfg, progress))
        return cls()


def test_load_local_and_loader_errors(tmp_path, monkeypatch):
    fake = types.ModuleType("engine.local")
    fake.LocalEngine = FakeLocalEngine  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "engine.local", fake)
    monkeypatch.setattr(factory, "_check_model_file", lambda p, what: None)
    ok = tmp_path / "ok.gguf"
    progress = lambda msg, frac: None  # noqa: E731
    eng = factory.open_engine(Config(model=str(ok), draft_model="none", n_ctx=2048), local=True, progress=progress)
    assert isinstance(eng, FakeLocalEngine)
    cfg, prog = FakeLocalEngine.loaded[-1]
    assert cfg.model_path == str(ok) and cfg.n_ctx == 2048 and prog is progress
    bad = tmp_path / "explode.gguf"
    with pytest.raises(factory.EngineOpenError) as e:
        factory.open_engine(Config(model=str(bad), draft_model="none"), local=True)
    assert str(e.value) == f"cannot load {bad}: llama_model_load: failed"
