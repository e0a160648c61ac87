"""The bench's workloads: whole-file edits (Python, TypeScript, Go), new code from a spec,
and a replayed multi-turn agent transcript."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from importlib import resources


def source(name: str) -> str:
    return resources.files("engine.lab.benchdata").joinpath(name + ".txt").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Workload:
    name: str
    kind: str  # 'edit' | 'new' | 'agent'
    turns: tuple[tuple[dict, ...], ...]  # each turn: the chat messages that make its prompt
    max_tokens: int = 640
    repo: dict[str, str] = field(default_factory=dict)  # files an app would register with the overlay


SYSTEM = "You are a careful senior software engineer. Follow the instructions exactly."


def _edit(name: str, filename: str, lang: str, instruction: str, stored: str = "") -> Workload:
    """stored: the benchdata file holding the text, when another set's file has the same name."""
    text = source(stored or filename)
    user = (
        f"Here is `{filename}`:\n\n```{lang}\n{text}```\n\n{instruction}\n"
        "Reply with the complete updated file in a single code block and nothing else."
    )
    return Workload(name, "edit", (({"role": "system", "content": SYSTEM}, {"role": "user", "content": user}),))


EDIT_PY = _edit(
    "edit-python", "inventory.py", "python",
    "Add a `discount(self, sku: str, percent: int) -> int` method to `Inventory` (after `sell`) that lowers the "
    "item's price by the given percent (0-100, else ValueError) and returns the new price in cents.",
)
EDIT_TS = _edit(
    "edit-typescript", "cart.ts", "typescript",
    "Rename the method `subtotalCents` to `totalCents` and make `add` return the new quantity of the line.",
)
EDIT_GO = _edit(
    "edit-go", "ratelimit.go", "go",
    "Add a method `Tokens(key string) float64` that returns how many tokens the key has left (the burst for an "
    "unknown key), using the same locking as the other methods.",
)
def _new(name: str, request: str, max_tokens: int = 512) -> Workload:
    """New code from a spec: nothing in the prompt to copy."""
    return Workload(name, "new", (({"role": "system", "content": SYSTEM}, {"role": "user", "content": request}),),
                    max_tokens=max_tokens)


NEW_CODE = _new(
    "new-code",
    "Write a Python module `lru.py` with a class `LRUCache(capacity: int)` with `get(key, default=None)`, "
    "`put(key, value)`, `__len__`, `__contains__` and a `stats()` method returning hits and misses, using "
    "collections.OrderedDict, with docstrings and type hints. Then write pytest tests for it.",
)

_AGENT_SYSTEM = (
    "You are tau, a coding agent working in a git repository. Use the tools to read and change files. "
    "Call a tool with <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>."
)


def _agent() -> Workload:
    inv = source("inventory.py")
    rl = source("ratelimit.go")
    t1 = (
        {"role": "system", "content": _AGENT_SYSTEM},
        {"role": "user", "content": "In inventory.py, make `low_stock` return the items sorted by quantity, lowest first."},
        {"role": "assistant", "content": "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"inventory.py\"}}\n</tool_call>"},
        {"role": "tool", "content": inv},
        {"role": "user", "content": "Now write the whole updated inventory.py with write_file."},
    )
    t2 = t1 + (
        {"role": "assistant", "content": "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"inventory.py\", \"content\": \"...\"}}\n</tool_call>"},
        {"role": "tool", "content": "wrote inventory.py (66 lines)"},
        {"role": "user", "content": (
            "Good. In ratelimit/ratelimit.go (you read it earlier; the output was trimmed from this conversation), "
            "change `Allow` so it returns `ErrLimited` wrapped with the key: fmt.Errorf(\"%w: %s\", ErrLimited, key). "
            "Write the whole updated file with write_file."
        )},
    )
    return Workload("agent-replay", "agent", (t1, t2), max_tokens=700, repo={"inventory.py": inv, "ratelimit/ratelimit.go": rl})


AGENT = _agent()


def _long_run() -> Workload:
    from engine.lab.benchdata.longrun import long_run  # its own module (it builds on this one's helpers)

    return long_run()


def _heldout(number: int) -> tuple[Workload, ...]:
    """The numbered held-out set: ``heldout{N}.py`` holds ``HELDOUT{N}`` (the first has no number)."""
    suffix = "" if number == 1 else str(number)
    # imported late: each set's module builds on this one's helpers
    module = importlib.import_module(f"engine.lab.benchdata.heldout{suffix}")
    return getattr(module, f"HELDOUT{suffix}")


SUITES: dict[str, tuple[Workload, ...]] = {
    "quick": (EDIT_PY,),
    "edits": (EDIT_PY, EDIT_TS, EDIT_GO),
    "full": (EDIT_PY, EDIT_TS, EDIT_GO, NEW_CODE, AGENT),
    "agent": (AGENT,),
    "new": (NEW_CODE,),
    "peer": (EDIT_PY, EDIT_TS, NEW_CODE),  # the side-by-side table against llama-server (--peer-server)
    "long": (_long_run(),),  # one engine serving about forty varied requests in a row
    "heldout": _heldout(1),  # written after tuning ended: edits and new code the engine was never tuned on
    "heldout2": _heldout(2),  # written after the sixth round's tuning (this set has never been run before it)
    "heldout3": _heldout(3),  # written after the seventh round's tuning
    "heldout4": _heldout(4),  # written after the eighth round's tuning
    "heldout5": _heldout(5),  # written after the ninth round (padded GPU passes)
    "heldout6": _heldout(6),  # written after the tenth round (picks overlapped with plain steps on a GPU)
    "heldout7": _heldout(7),  # written after the eleventh round (side-layout ratios by median pairs)
    "heldout8": _heldout(8),  # written after the twelfth round (pooled acceptance shrunk to its prior once)
    "heldout9": _heldout(9),  # written after the thirteenth round (later positions pooled, a copy's own run)
    "heldout10": _heldout(10),  # written after the fourteenth round (a reply echoing itself learns apart)
    "heldout11": _heldout(11),  # written after the fifteenth round (the KV state copy's buffer)
    "heldout12": _heldout(12),  # written after the sixteenth round (drafts cut at the end token)
    "heldout13": _heldout(13),  # written after the seventeenth round (early windows must double plain)
    "heldout14": _heldout(14),  # written after the eighteenth round (calibration at an edit's context length)
    "heldout15": _heldout(15),  # written after the nineteenth round (one reserved buffer for KV state copies)
    "heldout16": _heldout(16),  # written after the twentieth round (a short match's followed run counts)
    "heldout17": _heldout(17),  # written after the twenty-first round (prompts computed while the user types)
    "heldout18": _heldout(18),  # written after the twenty-second round (a long copy stays the overlay's home)
    "heldout19": _heldout(19),  # written after the twenty-second round's second change (a resumed copy counts its run)
    "heldout20": _heldout(20),  # written after the twenty-third round (the index finding where a copy left resumes it)
    "heldout21": _heldout(21),  # written after the twenty-third round too, before its first run (no policy change since)
    "heldout22": _heldout(22),  # written after the twenty-fourth round (no policy change since the twenty-third)
    "heldout23": _heldout(23),  # written after the twenty-fifth round (an echo run counts in a reply copying its prompt)
    "heldout24": _heldout(24),  # written in the twenty-sixth round (no policy change since the twenty-fifth)
    "heldout25": _heldout(25),  # written at the start of the twenty-seventh round (no change since the twenty-sixth)
    "heldout26": _heldout(26),  # written in the twenty-eighth round, before the AMX rebuild was measured
    "heldout27": _heldout(27),  # written after the twenty-eighth round's changes (AMX rebuilt, request-cost calibration)
    "heldout28": _heldout(28),  # written before the twenty-ninth round's first run
    "heldout29": _heldout(29),  # written in the thirtieth round after its engine change (rows on threads)
    "heldout30": _heldout(30),  # written in the thirty-first round before its first run
    "heldout31": _heldout(31),  # written at the start of the thirty-second round, before its first run
    "heldout32": _heldout(32),  # written at the start of the thirty-third round, before its first run
    "heldout33": _heldout(33),  # written at the start of the thirty-fourth round, before its first run
    "heldout34": _heldout(34),  # written at the start of the thirty-fifth round, before its first run
    "heldout35": _heldout(35),  # written at the start of the thirty-sixth round, before its first run
    "heldout36": _heldout(36),  # written at the start of the thirty-seventh round, before its first run
    "heldout37": _heldout(37),  # written at the start of the thirty-eighth round, before its first run
    "heldout38": _heldout(38),  # written after the 39th round's policy change, before its first run
    "heldout39": _heldout(39),  # written at the start of the 40th round, before its first run
    "heldout40": _heldout(40),  # written at the start of the 41st round, before its first run
    "heldout41": _heldout(41),  # written at the start of the 42nd round, before its first run
    "heldout42": _heldout(42),  # written at the start of the 43rd round, before its first run
    "heldout43": _heldout(43),  # written at the start of the 44th round, before its first run
    "heldout44": _heldout(44),  # written at the start of the 45th round, before its first run
}
