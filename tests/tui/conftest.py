"""Fixtures of the TUI tests: isolated config/state dirs, a small git repo, app builders."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFIG", "STATE", "CACHE", "RUNTIME"):
        d = tmp_path / f"_{name.lower()}"
        d.mkdir()
        monkeypatch.setenv(f"TAU_{name}_DIR", str(d))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small git repository named 'demo' (a fixed name keeps the snapshots stable)."""
    root = tmp_path / "demo"
    root.mkdir()
    (root / "a.py").write_text("def greet():\n    return 'hello'\n", encoding="utf-8")
    (root / "README.md").write_text("# demo\n", encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-q", "-m", "init"], check=True)
    return root
