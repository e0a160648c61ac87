from __future__ import annotations

from tools.matching import apply_edit

SRC = """\
import os


def load(path):
    with open(path) as f:
        data = f.read()
    return data


def save(path, data):
    with open(path, "w") as f:
        f.write(data)
"""


def test_exact_unique_match() -> None:
    out = apply_edit(SRC, "data = f.read()", "data = f.read().strip()")
    assert out.ok and out.how == "exact" and out.start_line == 6
    assert out.new_text == SRC.replace("f.read()", "f.read().strip()")


def test_exact_ambiguous_match_lists_lines() -> None:
    out = apply_edit(SRC, "    with open(path", "    with open(str(path)")
    assert not out.ok and out.how == "ambiguous"
    assert "2 times" in out.message and "lines 5, 11" in out.message


def test_whitespace_tolerant_match_reindents() -> None:
    search = "with open(path) as f:\n    data = f.read()\n"  # indentation lost by the model
    replace = "with open(path, encoding='utf-8') as f:\n    data = f.read()\n"
    out = apply_edit(SRC, search, replace)
    assert out.ok and out.how == "whitespace"
    assert "    with open(path, encoding='utf-8') as f:\n        data = f.read()\n    return data" in (
        out.new_text or ""
    )


def test_whitespace_inline_match() -> None:
    out = apply_edit("x = call(a,  b)\n", "call(a, b)", "call(b, a)")
    assert out.ok and out.new_text == "x = call(b, a)\n"


def test_fuzzy_match_with_a_small_typo() -> None:
    search = "def save(path, data):\n    with open(path, 'w') as f:\n        f.write(data)\n"
    replace = "def save(path, data):\n    with open(path, 'w') as f:\n        f.write(data)\n        f.flush()\n"
    out = apply_edit(SRC, search, replace)
    assert out.ok and out.how == "fuzzy", out.message
    assert out.start_line == 10 and out.end_line == 12
    assert 0.85 <= out.similarity < 1.0
    assert out.new_text is not None and out.new_text.endswith("        f.write(data)\n        f.flush()\n")
    assert 'with open(path, "w")' not in out.new_text  # the matched lines were replaced


def test_no_match_says_did_you_mean_with_closest_lines() -> None:
    out = apply_edit(SRC, "def load(filename):\n    with open(filename) as fh:\n", "x")
    assert not out.ok and out.how == "no-match"
    assert "Did you mean" in out.message
    assert "    4| def load(path):" in out.message
    assert "    5|     with open(path) as f:" in out.message


def test_nothing_similar() -> None:
    out = apply_edit(SRC, "zzzzqqqq", "x")
    assert not out.ok and "nothing similar" in out.message


def test_fuzzy_ambiguity_is_reported() -> None:
    text = "alpha = compute(1, 2, 3)\nbeta = 0\nalpha = compute(1, 2, 4)\n"
    out = apply_edit(text, "alpha = compute(1, 2, 5)", "x")
    assert not out.ok
    assert out.how in ("ambiguous", "no-match")
    assert "lines 1-1" in out.message and "lines 3-3" in out.message


def test_empty_search_is_invalid() -> None:
    out = apply_edit(SRC, "  \n", "x")
    assert not out.ok and "write_file" in out.message


def test_deleting_lines() -> None:
    out = apply_edit(SRC, "import os\n", "")
    assert out.ok and out.new_text is not None and not out.new_text.startswith("import os")


def test_fuzzy_is_fast_on_large_files() -> None:
    import time

    big = "".join(f"value_{i} = compute({i}, {i * 7})\n" for i in range(5000))
    t0 = time.monotonic()
    out = apply_edit(big, "value_2500 = compute(2500, 17501)\nvalue_2501 = compute(2501, 17507)\n", "x\n")
    assert time.monotonic() - t0 < 5
    assert out.ok and out.how == "fuzzy" and out.start_line == 2501


def test_partial_line_with_whitespace_drift_keeps_the_rest_of_the_line() -> None:
    text = "    result = compute(alpha,  beta)  # keep me\n"
    out = apply_edit(text, "compute(alpha, beta", "compute(alpha, gamma")
    assert out.ok and out.how == "whitespace"
    assert out.new_text == "    result = compute(alpha, gamma)  # keep me\n"


def test_inline_whitespace_ambiguity() -> None:
    out = apply_edit("f(a,  b)\ng(a,   b)\n", "(a, b)", "(b, a)")
    assert not out.ok and out.how == "ambiguous" and "lines 1, 2" in out.message


def test_search_copied_with_quoted_line_numbers() -> None:
    search = "    4| def load(path):\n    5|     with open(path) as f:\n"
    out = apply_edit(SRC, search, "def load(path, mode='r'):\n    with open(path, mode) as f:\n")
    assert out.ok and out.how == "exact"
    assert out.new_text is not None and "def load(path, mode='r'):\n    with open(path, mode) as f:\n" in out.new_text


def test_fuzzy_never_swallows_a_line_the_search_skipped() -> None:
    text = "alpha = 1\nbeta = 2\ngamma = 3\ndelta = 4\nepsilon = 5\n"
    out = apply_edit(text, "alpha = 1\ngamma = 3\ndelta = 4\nepsilon = 5\n", "alpha = 1\ngamma = 3\ndelta = 40\nepsilon = 5\n")
    assert not out.ok  # a line is missing from the search: ask again rather than delete beta
    assert "Did you mean" in out.message and "    2| beta = 2" in out.message


def test_whole_line_search_keeps_the_line_break_when_replace_drops_it() -> None:
    out = apply_edit("a = 1\nb = 2\n", "a = 1\n", "a = 10")
    assert out.ok and out.new_text == "a = 10\nb = 2\n"
    assert apply_edit("a = 1\nb = 2\n", "a = 1\n", "").new_text == "b = 2\n"
