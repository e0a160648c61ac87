from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.file_edit import EditFile, WriteFile
from tools.file_read import ReadFile
from tools.file_search import Grep, ListFiles
from tools.paths import PathEscape, relative, resolve_in_workspace


def test_relative_paths_resolve_inside(root: Path) -> None:
    assert resolve_in_workspace(root, "src/app.py") == root / "src" / "app.py"
    assert resolve_in_workspace(root, "") == root
    assert resolve_in_workspace(root, "src/../README.md") == root / "README.md"
    assert resolve_in_workspace(root, str(root / "README.md")) == root / "README.md"
    assert relative(root, root / "src" / "app.py") == "src/app.py"
    assert relative(root, root) == "."


@pytest.mark.parametrize("bad", ["..", "../x", "src/../../x", "/etc/passwd", "/"])
def test_escapes_are_refused(root: Path, bad: str) -> None:
    with pytest.raises(PathEscape, match="outside the workspace"):
        resolve_in_workspace(root, bad)


def test_path_escape_is_a_value_error() -> None:
    assert issubclass(PathEscape, ValueError)


def test_symlink_to_outside_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    os.symlink(outside, root / "link")
    os.symlink(outside / "secret.txt", root / "file_link")
    with pytest.raises(PathEscape, match="symlink"):
        resolve_in_workspace(root, "link/secret.txt")
    with pytest.raises(PathEscape, match="symlink"):
        resolve_in_workspace(root, "file_link")


def test_symlink_inside_is_followed(root: Path) -> None:
    os.symlink(root / "src" / "app.py", root / "alias.py")
    assert resolve_in_workspace(root, "alias.py") == root / "src" / "app.py"


def test_tools_refuse_escapes_with_a_clear_message(root: Path, tmp_path: Path, make_ctx) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n")
    os.symlink(outside, root / "out_link")
    ctx = make_ctx(root)
    attempts = [
        (ReadFile(), {"path": "../outside.txt"}),
        (ReadFile(), {"path": str(outside)}),
        (ReadFile(), {"path": "out_link"}),
        (WriteFile(), {"path": "../evil.txt", "content": "x"}),
        (WriteFile(), {"path": "out_link", "content": "overwritten"}),
        (EditFile(), {"path": str(outside), "search": "x", "replace": "y"}),
        (ListFiles(), {"path": ".."}),
        (Grep(), {"pattern": "x", "path": "/tmp"}),
    ]
    for tool, args in attempts:
        result = tool.run(args, ctx)
        assert not result.ok, (tool.name, args)
        assert "outside the workspace" in result.output
    assert outside.read_text() == "x\n"
    assert not (tmp_path / "evil.txt").exists()


def test_walk_skips_symlinks_leading_outside(root: Path, tmp_path: Path, make_ctx) -> None:
    (tmp_path / "leak.txt").write_text("needle outside\n")
    os.symlink(tmp_path / "leak.txt", root / "leak.txt")
    os.symlink(tmp_path, root / "leakdir")
    ctx = make_ctx(root)
    listed = ListFiles().run({}, ctx).output
    assert "leak" not in listed
    assert "no matches" in Grep().run({"pattern": "needle"}, ctx).output


def test_writes_inside_dot_git_are_refused(root: Path, make_ctx) -> None:
    result = WriteFile().run({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}, make_ctx(root))
    assert not result.ok and ".git" in result.output
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
