"""The long-running workload: one engine serving about forty varied requests in a row, the
traffic a ``tau serve`` sees over an hour of agent and editor use.

Conversations grow turn by turn with tool outputs (a file read, a failing test run, a grep)
and whole files written back; they interleave with each other and with standalone edits
and new code, so consecutive requests rarely share more than the system prompt. Every
request is one turn of the workload, run through the same engine without resetting its
speculation state in between: what the policy learned on one request meets the next.
The bench compares each request's decode speed with plain decoding's.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from typing import TYPE_CHECKING

from engine.types import GenStats

if TYPE_CHECKING:
    from engine.lab.benchdata.workloads import Workload


def _workloads():
    """engine.lab.benchdata.workloads, imported when used: its SUITES builds this workload."""
    return import_module("engine.lab.benchdata.workloads")


def source(name: str) -> str:
    return _workloads().source(name)

_AGENT = (
    "You are tau, a coding agent working in a git repository. Use the tools to read and change files. "
    "Call a tool with <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>."
)
_FILES = {"inventory.py": "python", "cart.ts": "typescript", "ratelimit.go": "go"}

Messages = tuple[dict, ...]


def _call(name: str, **args: str) -> dict:
    body = ", ".join(f'"{k}": "{v}"' for k, v in args.items())
    return {"role": "assistant", "content": f'<tool_call>\n{{"name": "{name}", "arguments": {{{body}}}}}\n</tool_call>'}


def _failing_test(filename: str) -> str:
    """A test run's output that points at the file (what an agent reads before a bug fix)."""
    return (
        "============================= test session starts ==============================\n"
        "collected 14 items\n\n"
        f"tests/test_{filename.split('.')[0]}.py ......F.......                                 [100%]\n\n"
        "=================================== FAILURES ===================================\n"
        "_____________________________ test_edge_case_zero ______________________________\n\n"
        "    def test_edge_case_zero():\n"
        f"        obj = make_fixture('{filename}')\n"
        ">       assert obj.apply(0) == 0\n"
        "E       AssertionError: assert -1 == 0\n"
        "E        +  where -1 = apply(0)\n\n"
        f"tests/test_{filename.split('.')[0]}.py:41: AssertionError\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_edge_case_zero - AssertionError: assert -1 == 0\n"
        "========================= 1 failed, 13 passed in 0.31s =========================\n"
    )


def _grep(filename: str, text: str, word: str) -> str:
    hits = [f"{filename}:{i + 1}:{line}" for i, line in enumerate(text.splitlines()) if word in line]
    return "\n".join(hits[:12]) or "(no matches)"


def _agent_turns(filename: str, asks: tuple[str, ...]) -> list[Messages]:
    """An agent conversation on one file: read it, rewrite it, run tests, fix, grep, explain."""
    text = source(filename)
    word = "return"
    conv: Messages = (
        {"role": "system", "content": _AGENT},
        {"role": "user", "content": asks[0]},
        _call("read_file", path=filename),
        {"role": "tool", "content": text},
        {"role": "user", "content": "Now write the whole updated file with write_file."},
    )
    turns = [conv]
    conv += (_call("write_file", path=filename, content="..."), {"role": "tool", "content": f"wrote {filename}"},
             {"role": "user", "content": "Run the tests."})
    turns.append(conv)
    conv += (_call("run_tests"), {"role": "tool", "content": _failing_test(filename)},
             {"role": "user", "content": f"Fix the failing test. Write the whole of {filename} again with write_file."})
    turns.append(conv)
    conv += (_call("write_file", path=filename, content="..."), {"role": "tool", "content": f"wrote {filename}"},
             _call("grep", pattern=word), {"role": "tool", "content": _grep(filename, text, word)},
             {"role": "user", "content": asks[1] + " Reply with the complete updated file in a single code block."})
    turns.append(conv)
    conv += ({"role": "assistant", "content": f"```\n{text}```"},
             {"role": "user", "content": "Explain in three sentences what you changed and why."})
    turns.append(conv)
    return turns


def _editor_turns(filename: str, asks: tuple[str, ...]) -> list[Messages]:
    """An editor's chat on one file (aider-like): the whole file each turn, the previous reply kept."""
    text = source(filename)
    lang = _FILES[filename]
    conv: Messages = ({"role": "system", "content": _workloads().SYSTEM},)
    turns = []
    for i, ask in enumerate(asks):
        shown = f"Here is `{filename}`:\n\n```{lang}\n{text}```\n\n" if i == 0 else ""
        conv += ({"role": "user", "content": f"{shown}{ask}\nReply with the complete updated file in a single code block and nothing else."},)
        turns.append(conv)
        conv += ({"role": "assistant", "content": f"```{lang}\n{text}```"},)
    return turns


def _edit(filename: str, ask: str) -> Messages:
    return _editor_turns(filename, (ask,))[0]


def _new(ask: str) -> Messages:
    return ({"role": "system", "content": _workloads().SYSTEM}, {"role": "user", "content": ask})


def long_run() -> Workload:
    agents = [
        _agent_turns("inventory.py", ("In inventory.py, make `low_stock` return the items sorted by quantity, lowest first.",
                                      "Add a docstring to every public method.")),
        _agent_turns("cart.ts", ("In cart.ts, make `remove` throw an Error when the SKU is not in the cart.",
                                 "Make every method that returns a number round to whole cents.")),
        _agent_turns("ratelimit.go", ("In ratelimit.go, make `Allow` return ErrLimited wrapped with the key.",
                                      "Add a Reset(key string) method that forgets a key, with the same locking.")),
    ]
    editors = [
        _editor_turns("cart.ts", ("Rename `subtotalCents` to `totalCents`.", "Make `add` return the new quantity of the line.",
                                  "Add a `clear()` method that empties the cart.")),
        _editor_turns("inventory.py", ("Add type hints wherever they are missing.", "Add a `discount(sku, percent)` method after `sell`.",
                                       "Rename `Inventory` to `Stock` everywhere.")),
        _editor_turns("ratelimit.go", ("Add a Tokens(key string) float64 method.", "Make the burst configurable per key.",
                                       "Add doc comments to every exported identifier.")),
    ]
    edits = [
        _edit("inventory.py", "Make `sell` raise a ValueError with the SKU when the stock would go negative."),
        _edit("cart.ts", "Add a `count()` method returning the number of items over all lines."),
        _edit("ratelimit.go", "Replace the mutex with a sync.RWMutex and take the read lock where nothing changes."),
        _edit("inventory.py", "Add a `__len__` returning the number of distinct SKUs."),
        _edit("cart.ts", "Make the cart serializable: add toJSON() and a static fromJSON()."),
        _edit("ratelimit.go", "Add a Stats() method returning how many calls were allowed and refused."),
    ]
    new = [_new(a) for a in (
        "Write a Python module `lru.py` with an LRUCache class (get, put, __len__) on collections.OrderedDict, with tests.",
        "Write a Python CLI that pretty-prints a JSON file with argparse options for indent and sorted keys.",
        "Write a TypeScript `debounce` function with generics and a cancel method, and vitest tests for it.",
        "Write a Go HTTP handler that returns the server time as JSON, and a table-driven test for it.",
        "Write a Python trie with insert, contains and starts_with, with docstrings and pytest tests.",
        "Write a Python retry decorator with exponential backoff, a max number of attempts and jitter.",
        "Write a SQL schema for users, orders and order lines, and a query for each user's total spend.",
        "Write a bash script that backs up a directory to a timestamped tar.gz and keeps the newest five.",
    )]
    # interleave: turns of different conversations alternate with standalone requests, as on a server
    queues = [list(q) for q in agents + editors] + [edits, new]
    turns: list[Messages] = []
    while any(queues):
        for q in queues:
            if q:
                turns.append(q.pop(0))
    return _workloads().Workload("long-run", "long", tuple(turns), max_tokens=700,
                    repo={name: source(name) for name in _FILES})


def per_request(plain: Sequence[GenStats], other: Sequence[GenStats]) -> list[float]:
    """Each request's decode tok/s over plain decoding's on the same request (what the bench
    reports for this workload: its smallest value is the claim "never below plain")."""
    out = []
    for a, b in zip(plain, other, strict=True):
        pa = a.completion_tokens / a.decode_s if a.decode_s else 0.0
        pb = b.completion_tokens / b.decode_s if b.decode_s else 0.0
        out.append(pb / pa if pa else 1.0)
    return out
