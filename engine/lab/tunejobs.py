"""``tau tune``'s workload: edit tasks on the user's own files, turns of their recent sessions, or
a built-in edit task (engine.lab.benchdata)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SOURCE_EXT = {
    ".py": "python",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".js": "javascript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".rb": "ruby",
    ".kt": "kotlin",
    ".swift": "swift",
    ".sh": "bash",
    ".toml": "toml",
    ".md": "markdown",
}
SYSTEM = "You are a careful senior software engineer. Follow the instructions exactly."


@dataclass(frozen=True)
class Job:
    name: str
    kind: str  # repo | session | builtin
    messages: tuple[dict, ...]
    max_tokens: int


def repo_jobs(
    root: str | Path, n: int = 2, max_tokens: int = 96, min_bytes: int = 600, max_bytes: int = 3500
) -> list[Job]:
    """Whole-file edit tasks on source files of the repository at ``root``."""
    root = Path(root)
    files: list[Path] = []
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files"], capture_output=True, text=True, timeout=10, check=False
        )
        if out.returncode == 0:
            files = [root / f for f in out.stdout.splitlines()]
    except (OSError, subprocess.SubprocessError):
        files = []
    if not files:
        for dirpath, dirnames, names in os.walk(root):
            dirnames[:] = [
                d
                for d in dirnames
                if not d.startswith(".") and d not in ("node_modules", "venv", "__pycache__")
            ]
            files += [Path(dirpath) / x for x in names]
            if len(files) > 5000:
                break
    cands: list[tuple[int, Path]] = []
    for f in files:
        lang = SOURCE_EXT.get(f.suffix)
        if lang is None or lang == "markdown":
            continue
        try:
            size = f.stat().st_size
        except OSError:
            continue
        if min_bytes <= size <= max_bytes:
            cands.append((size, f))
    cands.sort(key=lambda x: (-x[0], str(x[1])))
    jobs: list[Job] = []
    for _, f in cands:
        try:
            text = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        rel = f.relative_to(root) if f.is_relative_to(root) else f
        user = (
            f"Here is `{rel}`:\n\n```{SOURCE_EXT[f.suffix]}\n{text}```\n\nAdd a one-line comment above every function, "
            "method and class that says what it does. Reply with the complete updated file in a single code block "
            "and nothing else."
        )
        jobs.append(
            Job(
                f"repo:{rel}",
                "repo",
                ({"role": "system", "content": SYSTEM}, {"role": "user", "content": user}),
                max_tokens,
            )
        )
        if len(jobs) >= n:
            break
    return jobs


def session_jobs(
    conversations: Sequence[Sequence[dict]], n: int = 1, max_tokens: int = 96, max_chars: int = 6000
) -> list[Job]:
    """Replay assistant turns of recent conversations (newest first): the messages before a
    reply become the prompt; the newest ``n`` replies with text are used."""
    jobs: list[Job] = []
    for ci, conv in enumerate(conversations):
        msgs = [m for m in conv if isinstance(m, dict) and isinstance(m.get("content"), str)]
        for i in range(len(msgs) - 1, 0, -1):
            m = msgs[i]
            if m.get("role") != "assistant" or len(m["content"].strip()) < 40:
                continue
            ctx: list[dict] = []
            size = 0
            for prev in reversed(msgs[:i]):
                if size + len(prev["content"]) > max_chars and ctx:
                    break
                ctx.insert(0, {"role": prev["role"], "content": prev["content"]})
                size += len(prev["content"])
            if not ctx or ctx[-1]["role"] == "assistant":
                continue
            jobs.append(Job(f"session{ci}:turn{i}", "session", tuple(ctx), max_tokens))
            break
        if len(jobs) >= n:
            break
    return jobs


def builtin_jobs(max_tokens: int = 96) -> list[Job]:
    """Whole-file edits of the bench's sample files (engine.lab.benchdata), or a small inline one."""
    try:
        from engine.lab.benchdata.workloads import EDIT_GO, EDIT_PY

        return [
            Job("builtin:" + w.name, "builtin", tuple(w.turns[0]), max_tokens) for w in (EDIT_PY, EDIT_GO)
        ]
    except Exception:  # noqa: BLE001 - the bench data is optional
        code = (
            "def mean(xs):\n    return sum(xs) / len(xs)\n\n\ndef median(xs):\n    s = sorted(xs)\n    n = len(s)\n"
            "    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2\n"
        )
        user = f"Here is `stats.py`:\n\n```python\n{code}```\n\nAdd type hints and a docstring to both functions. Reply with the complete updated file."
        return [
            Job(
                "builtin:stats",
                "builtin",
                ({"role": "system", "content": SYSTEM}, {"role": "user", "content": user}),
                max_tokens,
            )
        ]


def collect_jobs(
    repo: str | Path | None, conversations: Sequence[Sequence[dict]], *, max_tokens: int = 96, n_jobs: int = 3
) -> list[Job]:
    jobs = session_jobs(conversations, n=1, max_tokens=max_tokens)
    if repo is not None:
        jobs += repo_jobs(repo, n=n_jobs - len(jobs), max_tokens=max_tokens)
    if not jobs:
        jobs = builtin_jobs(max_tokens)
    return jobs[:n_jobs]
