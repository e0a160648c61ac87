"""tau's own llama.cpp switches: set for tau's process when llama.cpp starts, a user's value kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engine.config import TAU_LLAMA_ENV

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "import os; from engine import backend; backend.init(); print(os.environ.get('GGML_CUDA_GRAPH_KEY_BY_ROWS'))"


def _after_init(env: dict[str, str]) -> str:
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_graph_key_switch_is_on_once_llama_cpp_starts() -> None:
    env = {k: v for k, v in os.environ.items() if k not in TAU_LLAMA_ENV}
    assert _after_init(env) == "1"


def test_a_users_own_value_is_kept() -> None:
    env = dict(os.environ, GGML_CUDA_GRAPH_KEY_BY_ROWS="mine")
    assert _after_init(env) == "mine"
