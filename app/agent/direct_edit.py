"""Single-shot edits for small models (``tau edit``): files in the prompt, edits back.

No tool calling: the model sees the files and the instruction and answers in the format
``app.agent.editformat`` picks for them: each small file rewritten whole in a fence, or
aider-style SEARCH/REPLACE blocks for larger ones. Blocks are applied in memory with the
tools' fuzzy matcher; blocks that miss are sent back once with the matcher's "did you mean"
note. Nothing is written until ``write_changes``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.agent.editformat import WHOLE, choose_format, elided, merge_partial
from app.agent.example_run import ExampleReport, run_examples
from app.agent.examples import ExampleResult, changed_functions, find_examples
from app.agent.pyimports import add_missing_imports
from app.agent.searchreplace import EditBlock, parse_edit_blocks
from app.loopwatch import LoopWatch
from app.wire import wire_for
from engine.types import (
    CancelToken,
    DoneEvent,
    Engine,
    GenerateRequest,
    GenStats,
    LinkedCancel,
    SamplingParams,
    TokenEvent,
)
from tools.atomic import atomic_write
from tools.diffs import make_diff
from tools.matching import apply_edit
from tools.pysyntax import broke_python, syntax_error
from tools.textio import TextFormat, decode, encode

EDIT_SYSTEM = """You are an expert programmer. You change code exactly as the user asks.
Answer ONLY with SEARCH/REPLACE blocks, one per change, in this format:

path/of/file.py
<<<<<<< SEARCH
lines copied exactly from the file, with their indentation
=======
the new lines
>>>>>>> REPLACE

Example: to make greet() in hello.py shout, answer:
hello.py
<<<<<<< SEARCH
    return "hello " + name
=======
    return "HELLO " + name.upper()
>>>>>>> REPLACE

Rules:
- The SEARCH lines must match the file exactly and be unique in it; keep them short.
- Several changes: several blocks. Do not repeat unchanged code outside the blocks.
- No explanations."""

WHOLE_SYSTEM = """You are an expert programmer. You change code exactly as the user asks.
Answer with the complete new content of every file you change: the file's path on one line,
then the whole file in a fenced code block, in this format:

path/of/file.py
```python
every line of the new file, changed or not
```

Rules:
- Write the whole file: every line, from the first to the last. Never shorten it with
  comments like "... rest of the code unchanged".
- Write real, complete code for what is asked: no placeholders, no hard-coded answers.
- Keep the lines that do not need to change exactly as they are.
- No explanations."""

FIX_PROMPT = """Some blocks did not apply:
{failures}

The files now are:
{files}
Reply with corrected SEARCH/REPLACE blocks for the failed changes only."""

WHOLE_FIX_PROMPT = """Your reply could not be used:
{failures}

The files now are:
{files}
Reply with the complete new content of each file to change, every line, in a fenced block after its path."""


class EditError(Exception):
    """Bad input to an edit (missing or binary file, too big for the context)."""


@dataclass
class SourceFile:
    path: str  # as given, relative to root
    original: str
    text: str
    fmt: TextFormat


@dataclass(frozen=True)
class FileChange:
    path: str
    old: str
    new: str
    diff: str
    fmt: TextFormat = field(default_factory=TextFormat)


@dataclass(frozen=True)
class EditOutcome:
    changes: list[FileChange]
    failures: list[str]
    stats: GenStats | None
    generations: int
    edit_format: str = WHOLE
    examples: ExampleReport | None = None  # the docstring examples of the changed functions

    @property
    def diff(self) -> str:
        return "".join(c.diff for c in self.changes)


def load_files(root: Path, paths: list[str]) -> list[SourceFile]:
    out = []
    for p in paths:
        full = (root / p).resolve()
        if not full.is_file():
            raise EditError(f"no such file: {p}")
        try:
            dec = decode(full.read_bytes())
        except ValueError as e:  # NotText
            raise EditError(f"{p}: {e}") from None
        out.append(SourceFile(p, dec.text, dec.text, dec.fmt))
    return out


def _show(files: list[SourceFile]) -> str:
    return "".join(f"{f.path}\n```\n{f.text}{'' if f.text.endswith(chr(10)) or not f.text else chr(10)}```\n\n" for f in files)


def edit_messages(files: list[SourceFile], instruction: str, fmt: str) -> list[dict[str, str]]:
    """The first request: the format's rules, then the files and the instruction."""
    return [
        {"role": "system", "content": WHOLE_SYSTEM if fmt == WHOLE else EDIT_SYSTEM},
        {"role": "user", "content": f"{_show(files)}Instruction: {instruction}"},
    ]


def _apply_whole(f: SourceFile, text: str) -> str | None:
    """Put a whole-file reply into ``f``; the failure, if it cannot stand for the file."""
    text = text if text.endswith("\n") or not text else text + "\n"
    skipped = elided(f.text, text)
    if skipped is not None:
        return f"{f.path}: the new file skips code ({skipped!r}); write every line of the file"
    if f.path.endswith(".py") and "def " in f.text and "def " not in text and "class " not in text:
        return f"{f.path}: the block is not the file (it has none of its functions); write the whole file"
    f.text = merge_partial(f.text, text) or text
    return None


def _apply(files: list[SourceFile], blocks: list[EditBlock]) -> list[str]:
    by_path = {f.path: f for f in files}
    failures = []
    rewritten: set[str] = set()
    for b in blocks:
        f = by_path.get(b.path) or by_path.get(b.path.lstrip("./"))
        if f is None:
            failures.append(f"{b.path}: not one of the files given ({', '.join(by_path)})")
            continue
        if b.whole_file:
            if f.path in rewritten:  # the file comes first; later fences are usage examples
                continue
            rewritten.add(f.path)
            failure = _apply_whole(f, b.replace)
            if failure:
                failures.append(failure)
            continue
        if not b.search.strip():
            if f.text.strip():  # an empty SEARCH is no licence to replace a whole file
                failures.append(f"{f.path}: empty SEARCH block; copy the lines to change from the file")
            else:
                f.text = b.replace if b.replace.endswith("\n") or not b.replace else b.replace + "\n"
            continue
        res = apply_edit(f.text, b.search, b.replace, f.path)
        if res.ok and res.new_text is not None:
            f.text = res.new_text
        else:
            failures.append(f"{f.path}: {res.message}\nSEARCH was:\n{b.search}")
    return failures


def _unparsable(files: list[SourceFile], before: dict[str, str]) -> list[str]:
    """Python files this reply left unparsable (when they parsed before it) go back to their text
    before it, and the failure says where: a file that no longer parses is not an edit to write."""
    failures = []
    for f in files:
        err = broke_python(f.path, before[f.path], f.text) if f.text != before[f.path] else None
        if err is not None:
            f.text = before[f.path]
            failures.append(f"{f.path}: the new file does not parse ({err}); none of this reply's change to it was kept")
    return failures


def _bare_code(reply: str, files: list[SourceFile]) -> list[EditBlock]:
    """A whole-file reply without a fence: accepted for one Python file when it parses."""
    if len(files) != 1 or not files[0].path.endswith(".py") or "def " not in reply or syntax_error(reply):
        return []
    return [EditBlock(files[0].path, "", reply.strip("\n"), whole_file=True)]


def plan_edit(
    engine: Engine,
    root: Path,
    paths: list[str],
    instruction: str,
    *,
    retries: int = 1,
    cancel: CancelToken | None = None,
    on_text: Callable[[str], None] | None = None,
    edit_format: str | None = None,
    sampling: SamplingParams | None = None,
    base: dict[str, str] | None = None,
    examples: bool = False,
    example_retries: int = 2,
) -> EditOutcome:
    """``edit_format``: WHOLE or SEARCH_REPLACE; None picks by the files' size. ``sampling``:
    greedy unless given. ``base``: texts to edit instead of the files' current ones (a fresh try
    from the originals after a failed one). ``examples``: run the docstring examples of the
    changed Python functions (sandboxed); while some fail, up to ``example_retries`` fresh
    sampled tries from the original files, told what failed, and the try with the fewest
    failures is kept (asked to repair its own code, a small model mostly returns it unchanged)."""
    once = functools.partial(_plan_once, engine, root, paths, retries=retries, cancel=cancel, on_text=on_text)
    outcome = once(instruction, edit_format=edit_format, sampling=sampling, base=base)
    report = check_examples(root, outcome.changes) if examples and not outcome.failures else None
    if report is None or not report.ran or report.ok:
        return replace(outcome, examples=report)
    originals = {**(base or {}), **{c.path: c.old for c in outcome.changes}}
    greedy = sampling or SamplingParams(temperature=0.0)
    best, best_report, gens = outcome, report, outcome.generations
    tried = {_texts(outcome)}
    for n in range(1, example_retries + 1):
        if cancel is not None and cancel.cancelled:
            break
        hint = (f"{instruction}\n\nAn earlier attempt did not do what the docstring shows.\n{best_report.feedback()}\n"
                "Write a correct implementation for the general case (not the examples' answers).")
        again = once(hint, edit_format=outcome.edit_format, base=originals,
                     sampling=retry_sampling(greedy.temperature, greedy.top_p, n))
        gens += again.generations
        if again.failures or not again.changes or _texts(again) in tried:
            continue
        tried.add(_texts(again))
        rep = check_examples(root, again.changes)
        if rep is not None and rep.ran and _failures(rep) < _failures(best_report):
            best, best_report = again, rep
            if rep.ok:
                break
    return replace(best, examples=best_report, generations=gens)


RETRY_TEMPERATURE = 0.6  # the agent's usual sampling, for a greedy run's retries


def retry_sampling(temperature: float, top_p: float, n: int, *, min_temperature: float = 0.0) -> SamplingParams:
    """How a try after a failed one samples: at the run's temperature, or at 0.6 in a greedy run
    (a greedy retry would repeat itself) or one below ``min_temperature``; seeded by the try, so
    a run is repeatable."""
    keep = temperature > 0 and temperature >= min_temperature
    return SamplingParams(temperature=temperature if keep else RETRY_TEMPERATURE, top_p=top_p if keep else 0.95,
                          seed=1000 + n)


def fresh_sampling(temperature: float, top_p: float, n: int) -> SamplingParams:
    """How a reply after a repeated one samples: at RETRY_TEMPERATURE at least (greedy, the 1.5B
    model gave one answer six times in a row to a failing check's push-back), seeded by ``n``.
    It does not break every loop: an answer copied from the context has tokens so likely that
    top-p keeps only them, and the copy comes back the same."""
    return retry_sampling(temperature, top_p, n, min_temperature=RETRY_TEMPERATURE)


def _texts(outcome: EditOutcome) -> tuple[tuple[str, str], ...]:
    return tuple((c.path, c.new) for c in outcome.changes)


def _failures(report: ExampleReport) -> int:
    return len(report.failed) if not report.error else len(report.results) + 1_000


def check_examples(root: Path, changes: list[FileChange]) -> ExampleReport | None:
    """The docstring examples (as the user wrote them) of every changed Python function, run
    against the new texts; None when there are none."""
    results: list[ExampleResult] = []
    for c in changes:
        if not c.path.endswith(".py"):
            continue
        names = changed_functions(c.old, c.new)
        kept = {(e.call, e.expected) for e in find_examples(c.new, names)}
        # an example the edit rewrote is the user's new intent, not a check on it
        found = [e for e in find_examples(c.old, names) if (e.call, e.expected) in kept]
        if not found:
            continue
        rep = run_examples(root, c.path, c.new, found)
        if not rep.ran or rep.error:
            return rep
        results += rep.results
    return ExampleReport(ran=True, results=tuple(results)) if results else None


def _plan_once(
    engine: Engine,
    root: Path,
    paths: list[str],
    instruction: str,
    *,
    retries: int = 1,
    cancel: CancelToken | None = None,
    on_text: Callable[[str], None] | None = None,
    edit_format: str | None = None,
    sampling: SamplingParams | None = None,
    base: dict[str, str] | None = None,
) -> EditOutcome:
    """One try: the reply, and up to ``retries`` resends of blocks that did not apply."""
    files = load_files(root, paths)
    for f in files:
        if base and f.path in base:
            f.original = f.text = base[f.path]
    for f in files:  # the drafter copies unchanged lines from here: a rewrite costs its changes
        engine.register_context(f"file:{f.path}", f.original)
    fmt = edit_format or choose_format([f.original for f in files], engine.count_tokens)
    messages = edit_messages(files, instruction, fmt)
    n_ctx = engine.info.n_ctx
    stats: GenStats | None = None
    failures: list[str] = []
    gens = 0
    for attempt in range(retries + 1):
        prompt = engine.chat_prompt(messages)
        used = engine.count_tokens(prompt)
        want = max(512, 2 * sum(engine.count_tokens(f.text) for f in files) + 256)
        room = min(want, n_ctx - used)
        if room < 64:
            if attempt == 0:
                raise EditError(f"the files are too large for the context window ({n_ctx} tokens)")
            break
        req = GenerateRequest(prompt, max_tokens=room, sampling=sampling or SamplingParams(temperature=0.0),
                              stop=wire_for(engine.info).stop)
        done: DoneEvent | None = None
        watch, stop = LoopWatch(allow=prompt), LinkedCancel(cancel)
        for ev in engine.stream(req, stop):
            if isinstance(ev, TokenEvent):
                if on_text is not None:
                    on_text(ev.text)
                if watch.feed(ev.text):
                    stop.cancel()
            elif isinstance(ev, DoneEvent):
                done = ev
        gens += 1
        if done is not None and watch.period and not (cancel is not None and cancel.cancelled):
            done = replace(done, text=watch.kept(done.text), finish_reason="stop")
        if done is None or done.finish_reason in ("error", "cancelled"):
            failures = [f"generation {done.finish_reason if done else 'failed'}: {done.error if done else ''}".strip()]
            break
        stats = done.stats
        blocks, errors = parse_edit_blocks(done.text, [f.path for f in files])
        if not blocks and not errors and fmt == WHOLE:
            blocks = _bare_code(done.text, files)
        before = {f.path: f.text for f in files}
        failures = errors + _apply(files, blocks)
        failures += _unparsable(files, before)
        if not blocks and not errors:
            failures = ["the reply has no file in a fenced block" if fmt == WHOLE else "the reply has no SEARCH/REPLACE block"]
        if failures and watch.period:
            failures.append("the reply repeated the same text over and over and was stopped; write each part once")
        if not failures:
            break
        fix = WHOLE_FIX_PROMPT if fmt == WHOLE and all(b.whole_file for b in blocks) else FIX_PROMPT
        messages += [
            {"role": "assistant", "content": done.text},
            {"role": "user", "content": fix.format(failures="\n\n".join(failures), files=_show(files))},
        ]
    for f in files:
        if f.path.endswith(".py") and f.text != f.original:
            f.text = add_missing_imports(f.text, f.original)[0]
    changes = [FileChange(f.path, f.original, f.text, make_diff(f.path, f.original, f.text), f.fmt)
               for f in files if f.text != f.original]
    return EditOutcome(changes, failures, stats, gens, fmt)


def write_changes(root: Path, changes: list[FileChange]) -> None:
    for c in changes:
        atomic_write((root / c.path).resolve(), encode(c.new, c.fmt))
