"""Java HumanEval problems (MultiPL-E's) as repositories: what they hold, how a reply becomes the
solution, and scoring by the problem's own asserts compiled with javac and run with assertions on."""

import json
import shutil
import subprocess

import pytest

from app.evals import java, systems
from app.evals.problems import make_repo, parse_selection, score

needs_jdk = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("make") is None,
                               reason="needs a JDK and make")

HEAD = "import java.util.*;\nimport org.javatuples.*;\nimport java.util.stream.*;\nclass Problem {\n"
JAVA_ENTRY = {
    "name": "HumanEval_53_add", "language": "java",
    "prompt": HEAD + "    // Add two numbers x and y\n    // >>> add((2l), (3l))\n    // (5l)\n"
              "    public static long add(long x, long y) {\n",
    "tests": "    }\n    public static void main(String[] args) {\n    assert(add((0l), (1l)) == (1l));\n"
             "    assert(add((5l), (7l)) == (12l));\n    }\n\n}\n",
}
TUPLE_ENTRY = dict(JAVA_ENTRY, name="HumanEval_8_sum_product",
                   prompt=HEAD + "    public static Pair<Long, Long> sumProduct(ArrayList<Long> numbers) {\n")
SOLVED = HEAD.replace("import org.javatuples.*;\n", "") + "    public static long add(long x, long y) {\n"


def test_a_java_entry_becomes_a_problem_without_javatuples():
    p = java.to_problem(JAVA_ENTRY)
    assert (p.task_id, p.number, p.entry_point, p.lang) == ("HumanEval-java/53", 53, "add", "java")
    assert "javatuples" not in p.prompt and "javatuples" not in p.test_file()  # no JDK ships it
    assert p.stub().endswith('    public static long add(long x, long y) {\n'
                             '        throw new UnsupportedOperationException("not implemented");\n    }\n}\n')
    assert p.test_file().startswith("import java.util.*;\nimport java.util.stream.*;\nclass TestProblem extends Problem {\n"
                                    "    public static void main(")
    with pytest.raises(ValueError, match="javatuples"):
        java.to_problem(TUPLE_ENTRY)
    with pytest.raises(ValueError, match="open method body"):
        java.to_problem(dict(JAVA_ENTRY, tests="public static void main(String[] a) {}\n"))
    for name, ids in java.SETS.items():
        assert parse_selection(name, java.SETS) == list(ids)
    every = [n for ids in java.SETS.values() for n in ids]
    assert len(every) == len(set(every))


def test_load_problems_leaves_out_the_tuple_problems(tmp_path):
    path = tmp_path / "humaneval-java.json"
    path.write_text(json.dumps([JAVA_ENTRY, TUPLE_ENTRY]))
    assert list(java.load_problems(path)) == [53]


@needs_jdk
def test_its_own_asserts_score_a_java_solution(tmp_path):
    p = java.to_problem(JAVA_ENTRY)
    repo = make_repo(tmp_path / "r", p, with_tests=False)
    assert not (repo / "Makefile").exists() and not (repo / "TestProblem.java").exists()
    assert score(repo, p) is False  # the stub throws
    (repo / "Problem.java").write_text(SOLVED + "        return x + y;\n    }\n}\n")
    assert score(repo, p) is True
    (repo / "Problem.java").write_text(SOLVED + "        return x - y;\n    }\n}\n")
    assert score(repo, p) is False  # a failed assert counts only because the tests run with -ea
    (repo / "Problem.java").write_text(SOLVED + "        return x + y\n    }\n}\n")  # does not compile
    assert score(repo, p) is False


@needs_jdk
def test_visible_tests_come_with_a_makefile_whose_make_test_runs_them(tmp_path):
    p = java.to_problem(JAVA_ENTRY)
    repo = make_repo(tmp_path / "r", p, with_tests=True)
    assert "make test" in systems.run_task(p) and "Problem.java" in systems.instruction(p)
    assert subprocess.run(["make", "-s", "test"], cwd=repo, capture_output=True).returncode != 0
    (repo / "Problem.java").write_text(SOLVED + "        return x + y;\n    }\n}\n")
    assert subprocess.run(["make", "-s", "test"], cwd=repo, capture_output=True).returncode == 0


def test_a_replys_java_block_becomes_class_problem():
    p = java.to_problem(JAVA_ENTRY)
    method = "Here:\n```java\npublic static long add(long x, long y) {\n    return x + y;\n}\n```\nDone."
    code = java.code_block(method, p)
    assert code.startswith("import java.util.*;\nimport java.util.stream.*;\nclass Problem {\n")  # wrapped, imports added
    assert code.rstrip().endswith("}\n}") and "return x + y;" in code
    renamed = "```java\nimport java.util.*;\npublic class Solution {\n    public static long add(long x, long y) { return x + y; }\n}\n```"
    assert java.code_block(renamed, p) == ("import java.util.*;\nclass Problem {\n"
                                           "    public static long add(long x, long y) { return x + y; }\n}\n")
    two = "```java\nint helper() { return 1; }\n```\n```java\nclass Problem {\n    static long add(long x, long y) { return x + y; }\n}\n```"
    assert "static long add(" in java.code_block(two, p)  # the block that defines the method


@needs_jdk
def test_a_replys_whole_class_scores(tmp_path):
    p = java.to_problem(JAVA_ENTRY)
    repo = make_repo(tmp_path / "r", p, with_tests=False)
    reply = ("```java\npublic class Solution {\n    public static long add(long x, long y) {\n        return x + y;\n    }\n"
             "    public static void main(String[] args) { System.out.println(add(1, 2)); }\n}\n```")
    (repo / "Problem.java").write_text(p.solution_from_reply(reply))
    assert score(repo, p) is True
