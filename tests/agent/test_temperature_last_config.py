"""``temperature_last`` (config.toml, ``--temperature-last``): llama.cpp's sampler order for the agent's
replies, ``tau serve`` and ``tau generate``; tau's own order (the temperature first) by default."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.agent import Agent
from app.cli.main import build_parser, config_from_args
from app.config import Config, ConfigError, load_config
from engine.scripted import ScriptedEngine
from tests.agent.agent_helpers import Recorder, agent_tools
from tools.permissions_types import approve_all


def test_the_config_key_takes_a_boolean_and_refuses_anything_else_in_one_line(tmp_path: Path) -> None:
    f = tmp_path / "config.toml"
    assert load_config(f).temperature_last is False
    f.write_text("temperature_last = true\n")
    assert load_config(f).temperature_last is True
    f.write_text('temperature_last = "yes"\n')
    with pytest.raises(ConfigError, match="temperature_last must be true or false"):
        load_config(f)


@pytest.mark.parametrize("argv", [["serve", "--temperature-last"], ["generate", "--prompt-file", "p.txt", "--temperature-last"]])
def test_the_flag_turns_it_on_and_leaving_it_out_keeps_the_config_files_value(argv, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("TAU_CONFIG_DIR", str(tmp_path))
    parser = build_parser()
    assert config_from_args(parser.parse_args(argv)).temperature_last is True
    assert config_from_args(parser.parse_args(argv[:-1])).temperature_last is False
    (tmp_path / "config.toml").write_text("temperature_last = true\n")
    assert config_from_args(parser.parse_args(argv[:-1])).temperature_last is True


@pytest.mark.parametrize("on", [False, True])
def test_the_agents_replies_sample_in_the_configured_order(on: bool, tmp_path: Path) -> None:
    engine = ScriptedEngine(["done"])
    cfg = replace(Config(mode="auto-edit", max_steps=2, temperature=0.6), temperature_last=on)
    Agent(engine, tmp_path, config=cfg, approver=approve_all, on_event=Recorder(), tools=agent_tools()).run_turn("hi")
    (req,) = engine.requests
    assert req.sampling.temper_last is on and req.sampling.temperature == 0.6
