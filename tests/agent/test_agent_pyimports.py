"""A rewrite that calls ``math.ceil`` without ``import math`` gets the import; names the file
binds itself, third-party modules and what the file lacked before are left alone."""

from app.agent.direct_edit import plan_edit
from app.agent.pyimports import add_missing_imports, missing_stdlib_imports
from engine.scripted import ScriptedEngine

STUB = '"""Squares."""\nfrom typing import List\n\n\ndef sum_squares(lst: List[float]) -> int:\n    """Sum of the ceilings squared."""\n    raise NotImplementedError\n'
BODY = '    return sum(int(x) ** 2 for x in map(math.ceil, lst))\n'


def test_only_unbound_standard_library_modules_are_missing():
    assert missing_stdlib_imports("def f(x):\n    return math.ceil(x) + re.X\n") == ["math", "re"]
    assert missing_stdlib_imports("def f(os):\n    return os.path\n") == []  # a parameter
    assert missing_stdlib_imports("import math as m\nmath = m\nx = math.pi\n") == []  # bound by assignment
    assert missing_stdlib_imports("x = np.zeros(3)\n") == []  # not the standard library: never guessed
    assert missing_stdlib_imports("def f(:\n") == []  # does not parse


def test_imports_go_after_the_docstring_and_the_existing_imports():
    new, added = add_missing_imports(STUB.replace("    raise NotImplementedError\n", BODY))
    assert added == ["math"]
    assert new.startswith('"""Squares."""\nfrom typing import List\nimport math\n\n\ndef sum_squares')
    compile(new, "s.py", "exec")
    plain, added = add_missing_imports("def f(x):\n    return math.floor(x)\n")
    assert added == ["math"] and plain == "import math\n\ndef f(x):\n    return math.floor(x)\n"


def test_what_the_file_lacked_before_is_not_this_edits_doing():
    before = "def g():\n    return os.getcwd()\n"
    after = before + "\n\ndef h(x):\n    return math.sqrt(x)\n"
    assert add_missing_imports(after, before)[1] == ["math"]
    assert add_missing_imports(before, before) == (before, [])


def test_tau_edit_adds_the_import_its_rewrite_forgot(tmp_path):
    (tmp_path / "solution.py").write_text(STUB)
    reply = "solution.py\n```python\n" + STUB.replace("    raise NotImplementedError\n", BODY) + "```\n"
    outcome = plan_edit(ScriptedEngine([reply]), tmp_path, ["solution.py"], "implement sum_squares")
    assert not outcome.failures
    ns: dict = {}
    exec(outcome.changes[0].new, ns)
    assert ns["sum_squares"]([1.4, 4.2, 0]) == 29
