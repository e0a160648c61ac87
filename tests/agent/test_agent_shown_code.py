from app.agent.shown_code import is_test_file, only_quotes, shown_edits, workspace_texts

LIB = "import os\n\n\n@cache\ndef area(r):\n    return 3 * r\n\n\nclass Box:\n    def size(self):\n        return 1\n"


def test_a_shown_function_replaces_the_files_definition_with_its_decorators():
    reply = "Fixed:\n```python\n@cache\ndef area(r):\n    return 3.14159 * r * r\n```"
    (e,) = shown_edits(reply, {"geo.py": LIB})
    assert (e.path, e.symbol) == ("geo.py", "area")
    assert e.search == "@cache\ndef area(r):\n    return 3 * r"
    assert e.replace == "@cache\ndef area(r):\n    return 3.14159 * r * r"


def test_classes_and_several_blocks_last_one_wins():
    reply = (
        "```python\nclass Box:\n    def size(self):\n        return 2\n```\nor better\n"
        "```py\nclass Box:\n    def size(self):\n        return 3\n```"
    )
    (e,) = shown_edits(reply, {"geo.py": LIB})
    assert e.symbol == "Box" and e.replace.endswith("return 3")


def test_what_is_not_applied():
    files = {"geo.py": LIB, "other.py": "def area(r):\n    return r\n", "test_geo.py": "def test_area():\n    assert 1\n"}
    # ambiguous name, unchanged definition, a test, another language, invalid Python, a snippet
    assert shown_edits("```python\ndef area(r):\n    return 0\n```", files) == []
    assert shown_edits("```python\nclass Box:\n    def size(self):\n        return 1\n```", files) == []
    assert shown_edits("```python\ndef test_area():\n    assert 2\n```", files) == []
    assert shown_edits("```js\nclass Box {}\n```", files) == []
    assert shown_edits("```python\ndef area(r:\n```", {"geo.py": LIB}) == []
    assert shown_edits("```python\nprint(area(2))\nx = 1\n```", {"geo.py": LIB}) == []
    # a file that does not parse is not a target
    assert shown_edits("```python\ndef f():\n    return 2\n```", {"bad.py": "def f(:\n"}) == []


def test_test_files_and_sources(tmp_path):
    assert is_test_file("tests/util.py") and is_test_file("pkg/test_x.py") and is_test_file("x_test.py")
    assert not is_test_file("pkg/testing.py")
    # JUnit's and NUnit's conventions: the class under test is never taken for its tests, nor the other way round
    assert all(map(is_test_file, ["TestProblem.java", "src/FooTest.java", "BarTests.cs", "QuxTestCase.java",
                                  "Test2.java", "ABTest.java", "Test.java", "lib/cart_spec.rb", "src/test/java/Foo.java"]))
    assert not any(map(is_test_file, ["Problem.java", "Testament.java", "Contest.java", "Latest.kt", "Attest.cs",
                                      "TestingUtils.java", "protest.py", "inspect.rb"]))
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.txt").write_text("no")
    (tmp_path / "c.py").write_bytes(b"\xff\xfe")
    assert workspace_texts(tmp_path, ["a.py", "b.txt", "c.py", "missing.py"], ".py") == {"a.py": "x = 1\n"}
    assert workspace_texts(tmp_path, ["a.py", "b.txt"]) == {"a.py": "x = 1\n", "b.txt": "no"}


def test_only_quotes():
    files = {"geo.py": LIB}
    assert only_quotes("It is:\n```python\nclass Box:\n    def size(self):\n```", files)
    assert only_quotes("no code at all", files)
    assert not only_quotes("```python\ndef area(r):\n    return 4 * r\n```", files)

