"""Search/replace on text (pure): exact unique match first, then whitespace-tolerant, then
fuzzy (difflib). A miss or an ambiguous match yields a "did you mean" message that quotes the
closest lines so the model can retry.

All text uses '\\n' line ends (see ``tools.textio``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

FUZZY_THRESHOLD = 0.85  # multi-line searches
FUZZY_THRESHOLD_ONE_LINE = 0.95
SUGGEST_FLOOR = 0.4
LINE_FLOOR = 0.6  # each line of a fuzzy match must be at least this similar
AMBIGUITY_MARGIN = 0.03
MAX_RATIO_CANDIDATES = 200
MAX_FUZZY_LINES = 50_000


@dataclass(frozen=True)
class EditOutcome:
    ok: bool
    how: str  # 'exact' | 'whitespace' | 'fuzzy' | 'ambiguous' | 'no-match' | 'invalid'
    new_text: str | None = None
    message: str = ""  # note on success, "did you mean" on failure
    start_line: int | None = None  # 1-based, first line of the match in the old text
    end_line: int | None = None
    similarity: float = 1.0


@dataclass(frozen=True)
class _Window:
    start: int  # 0-based line index
    size: int
    score: float

    @property
    def end(self) -> int:
        return self.start + self.size


def apply_edit(
    text: str,
    search: str,
    replace: str,
    path: str = "the file",
    *,
    replace_all: bool = False,
    occurrence: int | None = None,
) -> EditOutcome:
    """Replace the one place in ``text`` that ``search`` denotes with ``replace``; with
    ``replace_all`` every exact occurrence, with ``occurrence`` (1-based) that one."""
    if not search.strip():
        return EditOutcome(False, "invalid", message="search is empty; use write_file to rewrite a whole file")
    if occurrence is not None and occurrence < 1:
        return EditOutcome(False, "invalid", message=f"occurrence must be 1 or more, got {occurrence}")
    if search.endswith("\n") and replace and not replace.endswith("\n"):
        replace += "\n"  # whole lines in, whole lines out: do not glue the next line on
    exact = _exact(text, search, replace, path, replace_all, occurrence)
    if exact is not None:
        return exact
    unquoted = strip_line_numbers(search)
    if unquoted is not None:  # copied from a "did you mean" quote, numbers and all
        return apply_edit(
            text, unquoted, strip_line_numbers(replace) or replace, path, replace_all=replace_all, occurrence=occurrence
        )
    if occurrence is not None and occurrence > 1:
        return EditOutcome(
            False, "no-match", message=f"search text not found exactly in {path}; occurrence counts exact matches only"
        )
    lines = text.split("\n")
    s_lines, lead, trail = _trim_blank(search.split("\n"))
    r_lines = _trim_like(replace.split("\n"), lead, trail)
    outcome = _whitespace_lines(lines, s_lines, r_lines, path) or _whitespace_inline(text, search, replace, path)
    if outcome is not None:
        return outcome
    if len(lines) > MAX_FUZZY_LINES:
        return EditOutcome(
            False,
            "no-match",
            message=f"search text not found in {path} (too large for fuzzy matching); "
            "copy the exact lines from read_file or grep and retry",
            similarity=0.0,
        )
    return _fuzzy(lines, s_lines, r_lines, path) or _no_match(lines, s_lines, path)


_QUOTED = re.compile(r"^ *\d+\| ?")


def strip_line_numbers(text: str) -> str | None:
    """``text`` without the ``   12| `` prefixes this module quotes lines with, or None when
    not every non-blank line carries one."""
    lines = text.split("\n")
    if not any(x.strip() for x in lines) or not all(_QUOTED.match(x) for x in lines if x.strip()):
        return None
    return "\n".join(_QUOTED.sub("", x, count=1) for x in lines)


# -- exact --------------------------------------------------------------------------


MAX_LISTED = 10


def _positions(text: str, search: str) -> list[int]:
    """Start offsets of the non-overlapping occurrences of ``search`` (pure)."""
    out, pos = [], text.find(search)
    while pos != -1:
        out.append(pos)
        pos = text.find(search, pos + len(search))
    return out


def _exact(
    text: str, search: str, replace: str, path: str, replace_all: bool = False, occurrence: int | None = None
) -> EditOutcome | None:
    found = _positions(text, search)
    if not found:
        return None
    line_of = [text.count("\n", 0, pos) + 1 for pos in found]
    if replace_all and len(found) > 1:
        new = replace.join(text.split(search))
        lines = ", ".join(map(str, line_of[:MAX_LISTED])) + (" ..." if len(found) > MAX_LISTED else "")
        note = f"replaced all {len(found)} occurrences (lines {lines})"
        return EditOutcome(True, "exact", new, note, line_of[0], line_of[-1] + search.count("\n"))
    if occurrence is not None:
        if occurrence > len(found):
            return EditOutcome(
                False, "invalid", message=f"occurrence {occurrence} asked, but search text occurs {len(found)} time(s) in {path}"
            )
        chosen = occurrence - 1
    elif len(found) > 1:
        return EditOutcome(False, "ambiguous", message=_ambiguous(text, found, line_of, path))
    else:
        chosen = 0
    first = found[chosen]
    start = line_of[chosen]
    new = text[:first] + replace + text[first + len(search) :]
    return EditOutcome(True, "exact", new, "", start, start + search.count("\n"))


def _ambiguous(text: str, found: list[int], line_of: list[int], path: str) -> str:
    """The error for a search text found several times: where, and how to choose (pure)."""
    lines = text.split("\n")
    shown = sorted(set(line_of))[:MAX_LISTED]
    quoted = "\n".join(f"{n:>5}| {lines[n - 1]}" for n in shown)
    more = f"\n  ... and {len(found) - len(shown)} more" if len(found) > len(shown) else ""
    return (
        f"search text occurs {len(found)} times in {path} (lines {', '.join(map(str, shown))}):\n{quoted}{more}\n"
        "Pass replace_all: true to replace every occurrence, or occurrence: N (1-based, in file order) "
        "to replace one of them, or include more surrounding lines so it matches exactly one place."
    )


# -- whitespace-tolerant ------------------------------------------------------------


def _norm(line: str) -> str:
    return " ".join(line.split())


def _whitespace_lines(lines: list[str], s_lines: list[str], r_lines: list[str], path: str) -> EditOutcome | None:
    n = len(s_lines)
    target = [_norm(x) for x in s_lines]
    normed = [_norm(x) for x in lines]
    hits = [i for i in range(len(lines) - n + 1) if normed[i : i + n] == target]
    if not hits:
        return None
    if len(hits) > 1:
        where = ", ".join(str(i + 1) for i in hits[:10])
        return EditOutcome(
            False,
            "ambiguous",
            message=(
                f"search text matches {len(hits)} places in {path} when whitespace is ignored "
                f"(lines {where}). Include more surrounding lines so it matches exactly one place."
            ),
        )
    i = hits[0]
    new_lines = lines[:i] + _reindent(r_lines, s_lines, lines[i : i + n]) + lines[i + n :]
    return EditOutcome(
        True,
        "whitespace",
        "\n".join(new_lines),
        f"matched lines {i + 1}-{i + n} ignoring whitespace differences",
        i + 1,
        i + n,
    )


def _whitespace_inline(text: str, search: str, replace: str, path: str) -> EditOutcome | None:
    tokens = search.split()
    if not tokens:
        return None
    rx = re.compile(r"\s+".join(re.escape(t) for t in tokens))
    hits = list(rx.finditer(text))
    if not hits:
        return None
    if len(hits) > 1:
        where = ", ".join(str(text.count("\n", 0, h.start()) + 1) for h in hits[:10])
        return EditOutcome(
            False,
            "ambiguous",
            message=(
                f"search text matches {len(hits)} places in {path} when whitespace is ignored "
                f"(lines {where}). Include more surrounding text so it matches exactly one place."
            ),
        )
    m = hits[0]
    start = text.count("\n", 0, m.start()) + 1
    end = text.count("\n", 0, m.end()) + 1
    new = text[: m.start()] + replace + text[m.end() :]
    return EditOutcome(True, "whitespace", new, f"matched lines {start}-{end} ignoring whitespace", start, end)


# -- fuzzy --------------------------------------------------------------------------


def _threshold(s_lines: list[str]) -> float:
    return FUZZY_THRESHOLD_ONE_LINE if len(s_lines) == 1 else FUZZY_THRESHOLD


def _windows(lines: list[str], s_lines: list[str], exact_size: bool = False) -> list[_Window]:
    """Candidate windows with a similarity score, best first (scored lazily by quick_ratio).

    ``exact_size``: only windows of as many lines as the search (edits never silently drop or
    swallow a line); otherwise one line more or less too (suggestions)."""
    n = len(s_lines)
    target = "\n".join(_norm(x) for x in s_lines)
    normed = [_norm(x) for x in lines]
    sm = SequenceMatcher(None, autojunk=False)
    sm.set_seq2(target)
    quick: list[tuple[float, int, int]] = []
    for size in [n] if exact_size else sorted({max(1, n - 1), n, n + 1}):
        for i in range(0, max(0, len(lines) - size) + 1):
            cand = "\n".join(normed[i : i + size])
            sm.set_seq1(cand)
            if sm.real_quick_ratio() < SUGGEST_FLOOR:
                continue
            q = sm.quick_ratio()
            if q >= SUGGEST_FLOOR:
                quick.append((q, i, size))
    quick.sort(key=lambda t: -t[0])
    scored = []
    for _q, i, size in quick[:MAX_RATIO_CANDIDATES]:
        sm.set_seq1("\n".join(normed[i : i + size]))
        scored.append(_Window(i, size, sm.ratio()))
    scored.sort(key=lambda w: (-w.score, abs(w.size - n), w.start))
    return scored


def _disjoint(best: list[_Window], limit: int) -> list[_Window]:
    out: list[_Window] = []
    for w in best:
        if all(w.end <= o.start or w.start >= o.end for o in out):
            out.append(w)
        if len(out) == limit:
            break
    return out


def _fuzzy(lines: list[str], s_lines: list[str], r_lines: list[str], path: str) -> EditOutcome | None:
    threshold = _threshold(s_lines)
    top = _disjoint(_windows(lines, s_lines, exact_size=True), 2)
    if not top or top[0].score < threshold:
        return None
    best = top[0]
    if not _linewise_similar(lines[best.start : best.end], s_lines):
        return None
    if len(top) > 1 and top[1].score >= threshold and best.score - top[1].score < AMBIGUITY_MARGIN:
        return EditOutcome(
            False,
            "ambiguous",
            message=(
                f"no exact match in {path}, and two places are about equally close:\n"
                + "\n".join(_quote(lines, w) for w in top)
                + "\nInclude more surrounding lines (copied exactly) so it matches one place."
            ),
        )
    old = lines[best.start : best.end]
    new_lines = lines[: best.start] + _reindent(r_lines, s_lines, old) + lines[best.end :]
    return EditOutcome(
        True,
        "fuzzy",
        "\n".join(new_lines),
        f"no exact match; applied to the closest text, lines {best.start + 1}-{best.end} "
        f"({best.score:.0%} similar). Check the diff.",
        best.start + 1,
        best.end,
        best.score,
    )


def _linewise_similar(window: list[str], s_lines: list[str]) -> bool:
    """Every line of the window resembles its search line: a fuzzy edit may fix typos and
    drift, never put one line in place of a different one."""
    sm = SequenceMatcher(None, autojunk=False)
    for a, b in zip(window, s_lines, strict=True):
        sm.set_seqs(_norm(a), _norm(b))
        if sm.ratio() < LINE_FLOOR:
            return False
    return True


def _no_match(lines: list[str], s_lines: list[str], path: str) -> EditOutcome:
    top = [w for w in _disjoint(_windows(lines, s_lines), 2) if w.score >= SUGGEST_FLOOR]
    if not top:
        return EditOutcome(
            False,
            "no-match",
            message=(
                f"search text not found in {path}, and nothing similar either. "
                "Read the file (read_file) and copy the exact lines, or rewrite it with write_file."
            ),
            similarity=0.0,
        )
    return EditOutcome(
        False,
        "no-match",
        message=(
            f"search text not found in {path}. Did you mean:\n"
            + "\n".join(_quote(lines, w) for w in top)
            + "\nRetry edit_file with search copied exactly from these lines (without the line numbers)."
        ),
        similarity=top[0].score,
    )


def _quote(lines: list[str], w: _Window) -> str:
    body = "\n".join(f"{k + 1:>5}| {lines[k]}" for k in range(w.start, min(w.end, len(lines))))
    return f"lines {w.start + 1}-{w.end} ({w.score:.0%} similar):\n{body}"


# -- helpers ------------------------------------------------------------------------


def _trim_blank(lines: list[str]) -> tuple[list[str], int, int]:
    lead = 0
    while lead < len(lines) and not lines[lead].strip():
        lead += 1
    trail = 0
    while trail < len(lines) - lead and not lines[len(lines) - 1 - trail].strip():
        trail += 1
    return lines[lead : len(lines) - trail], lead, trail


def _trim_like(lines: list[str], lead: int, trail: int) -> list[str]:
    """Drop up to ``lead``/``trail`` blank lines of the replacement, mirroring the search."""
    i = 0
    while i < lead and i < len(lines) and not lines[i].strip():
        i += 1
    j = len(lines)
    k = 0
    while k < trail and j > i and not lines[j - 1].strip():
        j -= 1
        k += 1
    out = lines[i:j]
    return [] if out == [""] else out


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _first_indent(lines: list[str]) -> str | None:
    for line in lines:
        if line.strip():
            return _indent(line)
    return None


def _reindent(r_lines: list[str], s_lines: list[str], matched: list[str]) -> list[str]:
    """Shift the replacement's indentation by the difference between search and file."""
    si, fi = _first_indent(s_lines), _first_indent(matched)
    if si is None or fi is None or si == fi:
        return list(r_lines)
    out = []
    for line in r_lines:
        if not line.strip():
            out.append(line)
        elif line.startswith(si):
            out.append(fi + line[len(si) :])
        elif fi.startswith(si):
            out.append(fi[len(si) :] + line)
        else:
            out.append(line)
    return out
