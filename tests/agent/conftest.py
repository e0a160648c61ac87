from pathlib import Path

import pytest
from agent_helpers import git

from app.controller import opening
from engine.scripted import ScriptedEngine


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    d = tmp_path / "state"
    monkeypatch.setenv("TAU_STATE_DIR", str(d))
    monkeypatch.setenv("TAU_CONFIG_DIR", str(tmp_path / "config"))
    return d


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
    (root / "notes.txt").write_text("first line\nsecond line\n")
    # a second source file: a job that names no file is not about calc.py alone (app.agent.repair)
    (root / "util.py").write_text("def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    return root


@pytest.fixture
def engines(monkeypatch):
    """Queue ScriptedEngines for the CLI commands (what open_engine would return)."""
    made: list[ScriptedEngine] = []
    queue: list[ScriptedEngine] = []

    def factory(cfg, notify):
        eng = queue.pop(0)
        made.append(eng)
        return eng

    monkeypatch.setattr(opening, "override", factory)
    return queue, made


@pytest.fixture
def in_repo(repo, monkeypatch):
    monkeypatch.chdir(repo)
    return repo
