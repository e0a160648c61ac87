"""C++ HumanEval problems (MultiPL-E's) as repositories: what they hold, how a reply becomes the
solution, and scoring by the problem's own asserts compiled with g++."""

import json
import shutil
import subprocess

import pytest

from app.evals import cpp, systems
from app.evals.problems import make_repo, parse_selection, score

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("make") is None, reason="needs g++ and make")

CPP_ENTRY = {
    "name": "HumanEval_53_add", "language": "cpp",
    "prompt": "#include<assert.h>\n#include<bits/stdc++.h>\n// Add two numbers x and y\n// >>> add((2), (3))\n"
              "// (5)\nlong add(long x, long y) {\n",
    "tests": "}\nint main() {\n    auto candidate = add;\n    assert(candidate((0), (1)) == (1));\n"
             "    assert(candidate((5), (7)) == (12));\n}\n",
    "stop_tokens": ["\n}"],
}


def test_a_cpp_entry_becomes_a_problem_whose_stub_compiles_to_a_failure():
    p = cpp.to_problem(CPP_ENTRY)
    assert (p.task_id, p.number, p.entry_point, p.lang) == ("HumanEval-cpp/53", 53, "add", "cpp")
    assert p.test.startswith("int main() {")  # the brace closing the prompt's body is not the tests'
    assert p.stub().endswith('long add(long x, long y) {\n    throw std::logic_error("not implemented");\n}\n')
    assert p.test_file().startswith('#include "solution.cpp"\n')
    with pytest.raises(ValueError):
        cpp.to_problem(dict(CPP_ENTRY, tests="int main() {}\n"))
    for name, ids in cpp.SETS.items():
        assert parse_selection(name, cpp.SETS) == list(ids)
    every = [n for ids in cpp.SETS.values() for n in ids]
    assert len(every) == len(set(every))


@needs_gxx
def test_its_own_asserts_score_a_cpp_solution(tmp_path):
    p = cpp.load_problems(_data(tmp_path))[53]
    repo = make_repo(tmp_path / "r", p, with_tests=False)
    assert not (repo / "Makefile").exists() and not (repo / "test_solution.cpp").exists()
    assert score(repo, p) is False  # the stub throws
    (repo / "solution.cpp").write_text(p.prompt + "    return x + y;\n}\n")
    assert score(repo, p) is True
    (repo / "solution.cpp").write_text(p.prompt + "    return x - y;\n}\n")
    assert score(repo, p) is False
    (repo / "solution.cpp").write_text(p.prompt + "    return x + y\n}\n")  # does not compile
    assert score(repo, p) is False


@needs_gxx
def test_visible_tests_come_with_a_makefile_whose_make_test_runs_them(tmp_path):
    p = cpp.to_problem(CPP_ENTRY)
    repo = make_repo(tmp_path / "r", p, with_tests=True)
    assert "make test" in systems.run_task(p) and "solution.cpp" in systems.instruction(p)
    assert subprocess.run(["make", "-s", "test"], cwd=repo, capture_output=True).returncode != 0
    (repo / "solution.cpp").write_text(p.prompt + "    return x + y;\n}\n")
    assert subprocess.run(["make", "-s", "test"], cwd=repo, capture_output=True).returncode == 0


def test_a_replys_cpp_block_becomes_the_solution_without_its_own_main():
    p = cpp.to_problem(CPP_ENTRY)
    reply = ("Here it is:\n```cpp\nlong add(long x, long y) {\n    return x + y;\n}\n\nint main() {\n"
             "    std::cout << add(1, 2);\n}\n```\nDone.")
    code = cpp.code_block(reply, p)
    assert code.startswith("#include<assert.h>\n#include<bits/stdc++.h>\n")  # the prompt's includes, which it left out
    assert "return x + y;" in code and "int main" not in code
    whole = "```cpp\n#include <vector>\nlong add(long x, long y) { return x + y; }\n```"
    assert cpp.code_block(whole, p) == "#include <vector>\nlong add(long x, long y) { return x + y; }\n"
    two = "```cpp\nint helper() { return 1; }\n```\n```cpp\nlong add(long x, long y) { return x + y; }\n```"
    assert "long add(" in cpp.code_block(two, p)  # the block that defines the function


def _data(tmp_path):
    path = tmp_path / "humaneval-cpp.json"
    path.write_text(json.dumps([CPP_ENTRY]))
    return path
