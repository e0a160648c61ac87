import subprocess

from app.agent.instructions import load_instructions
from app.agent.mentions import attach_files, mentioned_files, small_workspace
from app.agent.repomap import python_symbols, regex_symbols, repo_map


def test_agents_md_wins_over_claude_md(tmp_path):
    assert load_instructions(tmp_path) is None
    (tmp_path / "CONVENTIONS.md").write_text("use tabs")
    assert load_instructions(tmp_path).path == "CONVENTIONS.md"
    (tmp_path / "CLAUDE.md").write_text("Run `make test`.")
    got = load_instructions(tmp_path)
    assert got.path == "CLAUDE.md" and got.text == "Run `make test`."
    (tmp_path / "AGENTS.md").write_text("Always use type hints.\n" * 1000)
    got = load_instructions(tmp_path, max_chars=100)
    assert got.path == "AGENTS.md" and got.truncated and len(got.text) < 150


def test_python_symbols_via_ast():
    src = "import os\nLIMIT = 3\n_private = 1\nclass Foo(Base):\n    def bar(self): ...\n    def _hid(self): ...\nasync def main():\n    pass\ndef _helper(): ...\n"
    assert python_symbols(src) == ["LIMIT", "class Foo(bar)", "def main"]
    assert python_symbols("def broken(:") == []


def test_regex_symbols_other_languages():
    assert regex_symbols("export function render(x) {}\nclass Widget {}\nconst go = async () => 1\n", "js") == ["render", "Widget", "go"]
    assert regex_symbols("func (s *Server) Start() error {\n}\ntype Server struct{}\n", "go") == ["Start", "Server"]
    assert regex_symbols("pub fn parse() {}\npub struct Token;\n", "rs") == ["parse", "Token"]


def test_repo_map_uses_git_and_is_capped(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("ignored/\n")
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "junk.py").write_text("def junk(): ...\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "core.py").write_text("class Engine:\n    def run(self): ...\n")
    (tmp_path / "web.ts").write_text("export class App {}\n")
    m = repo_map(tmp_path)
    assert "pkg/core.py: class Engine(run)" in m and "web.ts: App" in m
    assert "junk" not in m
    for i in range(200):
        (tmp_path / f"mod_{i:03}.py").write_text(f"def function_number_{i}(): ...\n")
    capped = repo_map(tmp_path, max_chars=1000)
    assert len(capped) <= 1100 and "more files" in capped.splitlines()[-1]


def test_repo_map_without_git_skips_hidden_and_vendored(tmp_path):
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "dep.js").write_text("function dep() {}\n")
    (tmp_path / ".hidden.py").write_text("def h(): ...\n")
    (tmp_path / "main.py").write_text("def main(): ...\n")
    assert repo_map(tmp_path) == "main.py: def main"


def test_mentioned_files_by_path_or_unique_name():
    files = ["src/app/calc.py", "src/app/util.py", "tests/util.py", "README.md"]
    text = "Fix calc.py (see src/app/util.py and util.py, README.md, missing.py, /etc/passwd.txt)."
    assert mentioned_files(text, files) == ["src/app/calc.py", "src/app/util.py", "README.md"]
    assert mentioned_files("no files here. version 1.2", files) == []


def test_attach_files_appends_contents_capped(tmp_path):
    (tmp_path / "a.py").write_text("A = 1\n")
    (tmp_path / "big.py").write_text("x" * 20_000)
    text, attached = attach_files(tmp_path, "look at a.py and big.py", ["a.py", "big.py"])
    assert attached == ["a.py"]
    assert text.startswith("look at a.py and big.py\n\n") and "a.py\n```\nA = 1\n```" in text and "xxxx" not in text
    assert attach_files(tmp_path, "nothing", ["a.py"]) == ("nothing", [])


def test_secret_files_are_never_attached(tmp_path):
    (tmp_path / ".env").write_text("API_KEY=hunter2\n")
    (tmp_path / "a.py").write_text("A = 1\n")
    text, attached = attach_files(tmp_path, "compare .env with a.py", [".env", "a.py"])
    assert attached == ["a.py"] and "hunter2" not in text
    text, attached = attach_files(tmp_path, "go", [".env", "a.py"], whole_small_workspace=True)
    assert attached == [] and "hunter2" not in text  # a workspace with secrets is not attached whole


def test_a_small_workspace_is_attached_whole_to_a_job(tmp_path):
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "test_calc.py").write_text("from calc import add\n")
    files = ["calc.py", "test_calc.py"]
    assert small_workspace(tmp_path, files) == files
    text, attached = attach_files(tmp_path, "the tests fail", files, whole_small_workspace=True)
    assert attached == files and "(Current content of the workspace's files:)" in text and "return a - b" in text
    assert attach_files(tmp_path, "the tests fail", files) == ("the tests fail", [])  # chat: only what is named
    text, attached = attach_files(tmp_path, "fix calc.py", files, whole_small_workspace=True)
    assert attached == ["calc.py"]  # a job that names files gets those
    (tmp_path / "big.py").write_text("x = 1\n" * 2000)
    assert small_workspace(tmp_path, files + ["big.py"]) == []
