"""tools/ knows no engine and no app: checked on the source, so a new import cannot slip in."""

from __future__ import annotations

import ast
from pathlib import Path

from engine.types import CancelToken
from tools.cancel import Cancellable, is_cancelled

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_tool_module_imports_the_engine_or_the_app() -> None:
    offenders = {p.name: sorted(_imported(p) & {"engine", "app", "themes"}) for p in TOOLS.glob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_engine_cancel_token_satisfies_the_tools_protocol() -> None:
    token = CancelToken()
    assert isinstance(token, Cancellable)
    assert not is_cancelled(token)
    token.cancel()
    assert is_cancelled(token) and not is_cancelled(None)
