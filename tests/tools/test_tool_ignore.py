from __future__ import annotations

from pathlib import Path

import pytest

from tools.file_read import ReadFile
from tools.file_search import Grep, ListFiles
from tools.globs import expand_braces, glob_match
from tools.ignore import IgnoreRules, parse_gitignore
from tools.walk import iter_files


def _ignored(text: str, rel: str, is_dir: bool = False) -> bool:
    result = False
    for rule in parse_gitignore(text):
        if rule.matches(rel, is_dir):
            result = not rule.negate
    return result


@pytest.mark.parametrize(
    ("patterns", "rel", "is_dir", "expected"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/dir/a.log", False, True),
        ("*.log", "a.log.txt", False, False),
        ("/build", "build", True, True),
        ("/build", "src/build", True, False),
        ("build/", "src/build", True, True),
        ("build/", "build", False, False),  # dir-only pattern, plain file
        ("docs/*.md", "docs/a.md", False, True),
        ("docs/*.md", "docs/sub/a.md", False, False),
        ("**/cache", "x/y/cache", True, True),
        ("a/**/z", "a/z", False, True),
        ("a/**/z", "a/b/c/z", False, True),
        ("logs/**", "logs/x/y.txt", False, True),
        ("*.log\n!keep.log", "keep.log", False, False),
        ("# comment\n\n*.tmp", "x.tmp", False, True),
        ("file[0-9].txt", "file7.txt", False, True),
        ("file[!0-9].txt", "file7.txt", False, False),
        ("\\#hash", "#hash", False, True),
    ],
)
def test_gitignore_patterns(patterns: str, rel: str, is_dir: bool, expected: bool) -> None:
    assert _ignored(patterns, rel, is_dir) is expected


def test_nested_gitignore_and_parent_dirs(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/\n*.pyc\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / ".gitignore").write_text("generated.py\n!important.pyc\n")
    rules = IgnoreRules(tmp_path)
    assert rules.is_ignored("node_modules/lib/index.js")  # inside an ignored directory
    assert rules.is_ignored("pkg/generated.py")
    assert not rules.is_ignored("generated.py")  # the nested rule only applies below pkg/
    assert rules.is_ignored("x.pyc")
    assert not rules.is_ignored("pkg/important.pyc")  # negated by the deeper file
    assert rules.is_ignored(".git/config")
    assert not rules.is_ignored("src/app.py")


def test_globs() -> None:
    assert glob_match("*.py", "a/b/c.py")
    assert glob_match("src/**/*.py", "src/x.py")
    assert glob_match("src/**/*.py", "src/a/b/x.py")
    assert not glob_match("src/*.py", "src/a/x.py")
    assert glob_match("*.{ts,tsx}", "web/app.tsx")
    assert expand_braces("a{b,c{d,e}}f") == ["abf", "acdf", "acef"]


def _tree(root: Path) -> None:
    (root / ".gitignore").write_text("build/\n*.log\n.venv\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("needle = 1\n")
    (root / "debug.log").write_text("needle in log\n")
    (root / ".venv" / "lib").mkdir(parents=True)
    (root / ".venv" / "lib" / "x.py").write_text("needle\n")
    (root / "src" / "util.py").write_text("needle = 2\n")
    (root / "src" / "notes.txt").write_text("a needle here\n")


def test_list_files_honours_gitignore(root: Path, make_ctx) -> None:
    _tree(root)
    out = ListFiles().run({}, make_ctx(root)).output.splitlines()
    assert out == [".gitignore", "README.md", "src/app.py", "src/notes.txt", "src/util.py"]


def test_list_files_pattern_and_path(root: Path, make_ctx) -> None:
    _tree(root)
    ctx = make_ctx(root)
    assert ListFiles().run({"pattern": "*.py"}, ctx).output.splitlines() == ["src/app.py", "src/util.py"]
    assert ListFiles().run({"path": "src", "pattern": "*.txt"}, ctx).output == "src/notes.txt"
    assert ListFiles().run({"path": "src", "pattern": "src/*.txt"}, ctx).output == "src/notes.txt"
    assert "no files" in ListFiles().run({"pattern": "*.rs"}, ctx).output
    missing = ListFiles().run({"path": "nope"}, ctx)
    assert not missing.ok and "not found" in missing.output


def test_grep_honours_gitignore(root: Path, make_ctx) -> None:
    _tree(root)
    result = Grep().run({"pattern": r"needle\b"}, make_ctx(root))
    assert result.ok
    lines = result.output.splitlines()
    assert lines[0] == "2 matching line(s) in 2 file(s)"
    assert lines[1:] == ["src/notes.txt:1: a needle here", "src/util.py:1: needle = 2"]


def test_grep_glob_path_line_numbers_and_errors(root: Path, make_ctx) -> None:
    ctx = make_ctx(root)
    out = Grep().run({"pattern": "return|print", "glob": "*.py"}, ctx).output
    assert "src/app.py:2:     print('hello')" in out
    assert "src/app.py:3:     return 0" in out
    assert Grep().run({"pattern": "demo", "path": "README.md"}, ctx).output.endswith("README.md:1: # demo")
    assert "no matches" in Grep().run({"pattern": "zzz"}, ctx).output
    bad = Grep().run({"pattern": "("}, ctx)
    assert not bad.ok and "invalid regular expression" in bad.output


def test_grep_skips_binary_and_secret_files(root: Path, make_ctx) -> None:
    (root / "blob.bin").write_bytes(b"needle\x00\x01\x02")
    (root / ".env").write_text("TOKEN=needle\n")
    (root / "innocent.txt").symlink_to(root / ".env")
    out = Grep().run({"pattern": "needle"}, make_ctx(root)).output
    assert "blob.bin" not in out and "TOKEN" not in out
    assert "[2 file(s) that may hold secrets were not searched]" in out


def test_walk_works_outside_a_git_repo(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("skip.txt\n")
    (tmp_path / "skip.txt").write_text("x")
    (tmp_path / "keep.txt").write_text("x")
    assert [f.rel for f in iter_files(tmp_path, tmp_path)] == [".gitignore", "keep.txt"]


def test_read_file_notes_ignored_files(root: Path, make_ctx) -> None:
    _tree(root)
    result = ReadFile().run({"path": "debug.log"}, make_ctx(root))
    assert result.ok and "needle in log" in result.output
    assert "ignored by .gitignore" in result.output


def test_list_files_accepts_a_glob_as_the_path(root: Path, make_ctx) -> None:
    _tree(root)
    out = ListFiles().run({"path": "src/*.py"}, make_ctx(root)).output
    assert out.splitlines() == ["src/app.py", "src/util.py"]


def test_workspace_in_a_subdirectory_of_a_repo_uses_the_parent_gitignore(root: Path, make_ctx) -> None:
    (root / ".gitignore").write_text("*.log\nsrc/gen/\n")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("scratch.txt\n")
    (root / "src" / "gen").mkdir()
    (root / "src" / "gen" / "x.py").write_text("x\n")
    (root / "src" / "a.log").write_text("x\n")
    (root / "src" / "scratch.txt").write_text("x\n")
    sub = root / "src"
    assert ListFiles().run({}, make_ctx(sub)).output.splitlines() == ["app.py"]
    rules = IgnoreRules(sub)
    assert rules.top == root and rules.prefix == "src"
    assert rules.is_ignored("gen/x.py") and rules.is_ignored("a.log") and not rules.is_ignored("app.py")
