"""Themes as data, slash commands and the stats formatting (no Textual app needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.controller import commands
from app.controller.statsfmt import (
    SessionStats,
    bars,
    drafter_shares,
    human_tokens,
    sparkline,
    status_fields,
    status_line,
)
from engine.types import GenStats
from themes import ThemeError, builtin_themes, load_themes, parse_theme


def test_builtin_themes_are_data_files() -> None:
    themes = builtin_themes()
    assert {"tau-dark", "tau-light", "tau-high-contrast"} <= set(themes)
    assert themes["tau-light"].dark is False and themes["tau-dark"].dark is True
    for spec in themes.values():
        assert spec.primary.startswith("#") and spec.color("background").startswith("#")


def test_user_themes_load_and_override_and_bad_files_are_reported(tmp_path: Path) -> None:
    (tmp_path / "ocean.toml").write_text('name = "ocean"\nprimary = "#00AAFF"\nbackground = "#001020"\n')
    (tmp_path / "dark.toml").write_text('name = "tau-dark"\nprimary = "#FF0000"\n')
    (tmp_path / "bad.toml").write_text('name = "bad"\nprimary = "blue-ish"\n')
    themes, errors = load_themes(tmp_path)
    assert themes["ocean"].color("background") == "#001020"
    assert themes["tau-dark"].primary == "#FF0000"
    assert "bad" not in themes
    assert len(errors) == 1 and "bad.toml" in errors[0] and "primary" in errors[0]


def test_theme_parse_errors_are_readable() -> None:
    with pytest.raises(ThemeError, match="unknown key"):
        parse_theme('name = "x"\nprimary = "#000000"\ncolour = "#ffffff"\n')
    with pytest.raises(ThemeError, match="not valid TOML"):
        parse_theme("name = ")


def test_user_theme_registers_in_the_app(tmp_path: Path) -> None:
    from app.tui.theme import textual_themes

    (tmp_path / "ocean.toml").write_text('name = "ocean"\nprimary = "#00AAFF"\ndark = false\n')
    specs, errors = load_themes(tmp_path)
    ocean = [t for t in textual_themes(specs.values()) if t.name == "ocean"][0]
    assert ocean.primary == "#00AAFF" and ocean.dark is False and not errors


def test_slash_commands() -> None:
    assert commands.parse("/mode ask") == ("mode", "ask")
    assert commands.parse("hello") is None and commands.parse("//not a command") is None
    assert commands.complete("/th") == ["/theme"]
    assert commands.complete("/") == ["/" + n for n in commands.NAMES]
    assert commands.complete("/theme x") == []
    assert commands.resolve("und") == "undo" and commands.resolve("c") is None
    expected = {"help", "undo", "diff", "clear", "model", "mode", "stats", "sessions", "compact", "theme", "quit"}
    assert set(commands.NAMES) == expected
    assert all(f"/{n}" in commands.help_text() for n in expected)


def test_bars_and_sparklines() -> None:
    assert bars([0.0, 0.5, 1.0]) == "▁▅█"
    assert bars([2.0, -1.0]) == "█▁"
    assert sparkline([1, 2, 4]) == "▃▅█"
    assert sparkline([]) == "" and sparkline([0, 0]) == "▁▁"
    assert human_tokens(999) == "999" and human_tokens(2150) == "2.1k" and human_tokens(131072) == "131k"


def test_status_fields() -> None:
    s = GenStats(
        completion_tokens=100, decode_s=2.0, wall_s=2.5, verify_passes=40,
        accepted={"ngram": 45, "draft": 15}, drafted={"ngram": 60, "draft": 40},
        accept_by_pos=(1.0, 0.5, 0.0), ceiling_tok_s=200.0,
    )
    assert drafter_shares(s.accepted) == [("ngram", 0.75), ("draft", 0.25)]
    line = status_line(status_fields(s, context_tokens=1500, context_limit=16384, model="m1", draft_model="m0"))
    assert line == (
        "decode 50.0 tok/s  wall 40.0 tok/s  τ 2.50  accept █▅▁  drafts ngram 75% draft 25%  "
        "ceiling 25%  ctx 1.5k/16.4k  model m1 + m0"
    )
    assert status_line(status_fields(None, model="m")) == "model m"
    slow = status_line(status_fields(GenStats(completion_tokens=1, decode_s=12.0, wall_s=40.0, verify_passes=1)))
    assert slow.startswith("decode 0.08 tok/s  wall 0.03 tok/s  τ 1.00")


def test_session_stats_per_turn() -> None:
    st = SessionStats()
    st.start_turn("one")
    st.add(GenStats(completion_tokens=50, decode_s=1.0, wall_s=1.0, verify_passes=25))
    st.add(GenStats(completion_tokens=50, decode_s=1.0, wall_s=2.0, verify_passes=25))
    st.start_turn("two")
    st.add(GenStats(completion_tokens=90, decode_s=1.0, wall_s=1.0, verify_passes=30, ceiling_tok_s=180.0))
    st.start_turn("cancelled before any token")
    turns = st.measured
    assert [t.stats.decode_tok_s for t in turns] == [50.0, 90.0]
    assert [t.tau for t in turns] == [2.0, 3.0]
    assert st.totals().stats.completion_tokens == 190
    report = st.report()
    assert "turns 2" in report and "τ 2.38" in report and "ceiling" in report
    assert "▅█" in report  # decode tok/s per turn


def test_interactive_entry_dispatches_plain_and_needs_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    import app.plain
    from app.cli import interactive
    from app.config import Config

    repo = tmp_path / "r"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    assert interactive.workspace_root() == repo.resolve()
    seen: dict = {}
    monkeypatch.setattr(app.plain, "run", lambda cfg, root, resume: seen.update(root=root, resume=resume) or 0)
    assert interactive.run(argparse.Namespace(plain=True, resume="abc"), Config()) == 0
    assert seen == {"root": repo.resolve(), "resume": "abc"}
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert interactive.run(argparse.Namespace(plain=False, resume=None), Config()) == 2
    assert "needs a terminal" in capsys.readouterr().err


def test_streamed_text_hides_tool_call_markup() -> None:
    from app.controller.visible import visible_text as vis

    assert vis('Editing.\n<tool_call>\n{"name": "edit_file", "arguments": {}}\n</tool_call>') == "Editing."
    assert vis('Editing.\n<tool_call>\n{"name": "edit_fi') == "Editing."
    assert vis("Editing.\n<tool_c") == "Editing."
    assert vis('Plan:\n```json\n{"name": "write_file", "arguments": {"path": "a.py"}}\n```\nok') == "Plan:\n\nok"
    assert vis('Plan:\n```json\n{\n  "name": "write_fi') == "Plan:"
    assert vis("Plan:\n```json\n") == "Plan:"
    assert vis('{"name": "read_file", "argu') == ""
    code = "Here:\n```python\ndef f():\n    return {}\n```"
    assert vis(code) == code
    assert vis('Config:\n```json\n{"port": 8080}\n```') == 'Config:\n```json\n{"port": 8080}\n```'
    assert vis("Use a < b or x<tools") == "Use a < b or x"
