"""``verify_threads`` in config.toml: -1 leaves it to the engine, 0 turns the row threads off, below -1 is an error."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.config import Config, ConfigError, load_config
from app.engines import factory


def test_the_setting_reaches_the_engine_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "resolve_model_paths", lambda cfg, progress=None: ("t.gguf", None))
    assert factory.engine_config(Config()).verify_threads is None  # the engine decides per machine
    assert factory.engine_config(replace(Config(), verify_threads=0)).verify_threads == 0
    assert factory.engine_config(replace(Config(), verify_threads=6)).verify_threads == 6


def test_a_bad_value_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "config.toml"
    f.write_text("verify_threads = 4\n")
    assert load_config(f).verify_threads == 4
    f.write_text("verify_threads = -3\n")
    with pytest.raises(ConfigError, match="verify_threads must be"):
        load_config(f)
    f.write_text('verify_threads = "many"\n')
    with pytest.raises(ConfigError, match="verify_threads must be int"):
        load_config(f)
