import io

import pytest

from app.agent import tokens
from app.agent.searchreplace import parse_edit_blocks
from app.diffview import colorize_diff, render_diff, unified_diff
from engine.scripted import ScriptedEngine


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_estimate_without_tiktoken_file_is_chars_over_3_5(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: no BPE file, no download attempt
    tokens._encoding.cache_clear()
    try:
        assert tokens.estimate_tokens("x" * 35) == 10
        assert tokens.estimate_tokens("") == 0
    finally:
        tokens._encoding.cache_clear()


def test_counter_prefers_the_engine_and_falls_back():
    eng = ScriptedEngine()
    count = tokens.counter_for(eng)
    assert count("abcdefgh") == eng.count_tokens("abcdefgh") == 2

    class NoTokenizer:
        def count_tokens(self, text):
            raise NotImplementedError

    assert tokens.counter_for(NoTokenizer()) is tokens.estimate_tokens
    assert tokens.counter_for(object()) is tokens.estimate_tokens


def test_diff_colour_only_on_a_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    d = unified_diff("a\nb\n", "a\nc\n", "x.py")
    assert d.splitlines()[:3] == ["--- a/x.py", "+++ b/x.py", "@@ -1,2 +1,2 @@"]
    assert render_diff(d, io.StringIO()) == d
    coloured = render_diff(d, FakeTTY())
    assert coloured != d and "\x1b[" in coloured and "+c" in coloured
    monkeypatch.setenv("NO_COLOR", "1")
    assert render_diff(d, FakeTTY()) == d
    assert "\x1b[38;5;" in colorize_diff(d, style="monokai")
    assert unified_diff("", "new\n", "n.txt").startswith("--- /dev/null\n+++ b/n.txt")


@pytest.mark.parametrize("header", ["calc.py", "`calc.py`", "**calc.py**", "File: calc.py", "### calc.py:"])
def test_search_replace_file_header_variants(header):
    reply = f"{header}\n```python\n<<<<<<< SEARCH\n    x = 1\n=======\n    x = 2\n>>>>>>> REPLACE\n```\n"
    blocks, errors = parse_edit_blocks(reply, ["calc.py", "other.py"])
    assert errors == [] and [(b.path, b.search, b.replace) for b in blocks] == [("calc.py", "    x = 1", "    x = 2")]


def test_search_replace_without_header_and_malformed():
    one = "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nc\n=======\n>>>>>>> REPLACE"
    blocks, errors = parse_edit_blocks(one, ["only.py"])
    assert [(b.path, b.search, b.replace) for b in blocks] == [("only.py", "a", "b"), ("only.py", "c", "")]
    _, errors = parse_edit_blocks(one, ["a.py", "b.py"])
    assert errors and "does not name its file" in errors[0]
    _, errors = parse_edit_blocks("<<<<<<< SEARCH\nx\n>>>>>>> REPLACE", ["a.py"])
    assert "malformed" in errors[0]
    assert parse_edit_blocks("no edits here", ["a.py", "b.py"]) == ([], [])
