"""Only ``app/tui`` imports Textual (checked on the sources and on a real import)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "engine", "tools", "themes")
# the package's __init__ loads the app lazily: importing app.tui must not load Textual
PLAIN_TUI_MODULES = ("__init__.py",)


def textual_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
            "import_module",
            "__import__",
        ):
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        found += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names if n.split(".")[0] == "textual"]
    return found


def test_no_textual_import_outside_app_tui_sources() -> None:
    offenders: list[str] = []
    checked = 0
    tui = ROOT / "app" / "tui"
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if tui in path.parents and path.name not in PLAIN_TUI_MODULES:
                continue
            checked += 1
            offenders += textual_imports(path)
    assert checked > 20
    assert offenders == []


def test_the_detector_finds_textual_imports(tmp_path: Path) -> None:
    probe = ROOT / "app" / "tui" / "app.py"
    assert textual_imports(probe), "app/tui/app.py imports textual: the AST check must see it"


def test_importing_the_rest_of_tau_does_not_load_textual() -> None:
    code = (
        "import sys\n"
        "import app.agent, app.agent.loop, engine, engine.scripted, tools, themes\n"
        "import app.cli.main, app.cli.interactive, app.plain, app.tui, app.controller.model_session\n"
        "import app.controller.slash, app.controller.statsfmt, app.engines.factory, app.engines.remote\n"
        "app.cli.main.build_parser()\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "assert not bad, bad[:5]\n"
        "import app.tui.app\n"
        "assert 'textual' in sys.modules\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
