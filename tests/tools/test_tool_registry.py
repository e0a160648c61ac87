from __future__ import annotations

import json
from pathlib import Path

from tools.base import Tool, ToolContext
from tools.registry import by_name, default_tools, tool_schemas

NAMES = [
    "read_file",
    "list_files",
    "grep",
    "write_file",
    "edit_file",
    "run_shell",
    "git_status",
    "git_diff",
    "git_log",
    "git_commit",
]


def test_default_tools_and_kinds() -> None:
    tools = default_tools()
    assert [t.name for t in tools] == NAMES
    assert all(isinstance(t, Tool) for t in tools)
    kinds = {t.name: t.kind for t in tools}
    assert kinds["read_file"] == kinds["list_files"] == kinds["grep"] == "read"
    assert kinds["write_file"] == kinds["edit_file"] == "edit"
    assert kinds["run_shell"] == "shell"
    assert {kinds[n] for n in NAMES if n.startswith("git_")} == {"git"}


def test_schemas_are_valid_function_tools() -> None:
    schemas = tool_schemas(default_tools())
    json.dumps(schemas)
    assert len(schemas) == len(NAMES)
    for s in schemas:
        assert s["type"] == "function"
        fn = s["function"]
        params = fn["parameters"]
        assert params["type"] == "object"
        assert set(params["required"]) <= set(params["properties"])
        assert all("type" in p for p in params["properties"].values())
        assert 20 < len(fn["description"]) < 200
    read = next(s["function"] for s in schemas if s["function"]["name"] == "read_file")
    assert set(read["parameters"]["properties"]) == {"path", "start_line", "end_line"}
    assert read["parameters"]["required"] == ["path"]


def test_tools_never_raise_on_bad_arguments(root: Path, ctx: ToolContext) -> None:
    tools = by_name(default_tools())
    for name, tool in tools.items():
        for args in ({}, {"path": 5, "pattern": None, "n": "x", "command": ["ls"], "message": {"a": 1}}):
            result = tool.run(args, ctx)
            assert isinstance(result.output, str) and result.output, (name, args)
    assert not tools["read_file"].run({"path": ["a"]}, ctx).ok
