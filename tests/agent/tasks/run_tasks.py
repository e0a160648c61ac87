"""Five small repositories with an obvious bug and a failing test; `tau run` must fix each.

    python tests/agent/tasks/run_tasks.py [--max-steps N] [--json OUT]

Each task: a fresh git repo in a temp dir, `tau run --json --mode full-auto "<task>"`, then
the repo's tests are run independently. Prints success rate, steps, decode/wall tok/s, tau.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASKS = [
    ("calc", {"calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
              "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"}),
    ("palindrome", {"text.py": "def is_palindrome(s):\n    s = ''.join(c for c in s if c.isalnum())\n    return s == s[::-1]\n",
                    "test_text.py": "from text import is_palindrome\n\n\ndef test_mixed_case():\n    assert is_palindrome('Racecar')\n\n\ndef test_not():\n    assert not is_palindrome('python')\n"}),
    ("lastn", {"seq.py": "def last_n(items, n):\n    \"\"\"The last n items.\"\"\"\n    return items[-n - 1:]\n",
               "test_seq.py": "from seq import last_n\n\n\ndef test_last_two():\n    assert last_n([1, 2, 3, 4], 2) == [3, 4]\n"}),
    ("maxof", {"stats.py": "def max_of(xs):\n    best = xs[0]\n    for x in xs[1:]:\n        if x < best:\n            best = x\n    return best\n",
               "test_stats.py": "from stats import max_of\n\n\ndef test_max():\n    assert max_of([3, 9, 2]) == 9\n"}),
    ("fizzbuzz", {"fb.py": "def fizzbuzz(n):\n    if n % 15 == 0:\n        return 'FizzBuzz'\n    if n % 3 == 0:\n        return 'Fizz'\n    if n % 3 == 0:\n        return 'Buzz'\n    return str(n)\n",
                  "test_fb.py": "from fb import fizzbuzz\n\n\ndef test_buzz():\n    assert fizzbuzz(10) == 'Buzz'\n\n\ndef test_fizz():\n    assert fizzbuzz(9) == 'Fizz'\n"}),
]

PROMPT = "The tests fail (run them with `python -m pytest -q`). Find the bug in the code and fix it, then run the tests to check."


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def tests_pass(root: Path) -> bool:
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, capture_output=True, timeout=120)
    return r.returncode == 0


def run_task(name: str, files: dict[str, str], max_steps: int) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"tau-task-{name}-") as d:
        root = Path(d)
        for rel, text in files.items():
            (root / rel).write_text(text)
        git(root, "init", "-q")
        git(root, "-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
        git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
        assert not tests_pass(root), f"{name}: tests should fail before the fix"
        t0 = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-m", "app.cli.main", "--local", "run", "--json", "--mode", "full-auto", "--max-steps", str(max_steps), PROMPT],
            cwd=root, capture_output=True, text=True, timeout=1800,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        )
        wall = time.perf_counter() - t0
        events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        stats = [e["stats"] for e in events if e["type"] == "engine_stats" and e.get("final")]
        tokens = sum(s["completion_tokens"] for s in stats)
        decode_s = sum(s["decode_s"] for s in stats)
        passes = sum(s["verify_passes"] for s in stats)
        final = next((e for e in events if e["type"] == "final"), {})
        return {
            "task": name,
            "success": tests_pass(root),
            "exit": p.returncode,
            "status": final.get("status"),
            "steps": sum(1 for e in events if e["type"] == "tool_call"),
            "edits": sum(1 for e in events if e["type"] == "tool_call" and e.get("name") in ("edit_file", "write_file")),
            "pushed_back": sum(1 for e in events if e["type"] == "notice" and str(e.get("message", "")).startswith("not done yet")),
            "done_for_it": sum(1 for e in events if e["type"] == "notice" and str(e.get("message", "")).startswith("before accepting")),
            "tokens": tokens,
            "decode_tok_s": round(tokens / decode_s, 2) if decode_s else 0.0,
            "tau": round(tokens / passes, 2) if passes else 0.0,
            "wall_s": round(wall, 1),
        }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-steps", type=int, default=10)
    ap.add_argument("--json")
    ap.add_argument("--only")
    args = ap.parse_args()
    results = []
    for name, files in TASKS:
        if args.only and name != args.only:
            continue
        r = run_task(name, files, args.max_steps)
        print(json.dumps(r), flush=True)
        results.append(r)
    ok = sum(r["success"] for r in results)
    tok = sum(r["tokens"] for r in results)
    print(f"success {ok}/{len(results)}; mean decode tok/s {sum(r['decode_tok_s'] for r in results) / len(results):.2f}; "
          f"mean tau {sum(r['tau'] for r in results) / len(results):.2f}; tokens {tok}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
