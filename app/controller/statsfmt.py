"""Formatting of the engine's live statistics: unicode bar charts, sparklines, status fields and
session totals. Plain Python, shared by the session layer and every front end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.types import GenStats, ceiling_fraction

BLOCKS = "▁▂▃▄▅▆▇█"


def bars(values: Sequence[float], lo: float = 0.0, hi: float = 1.0) -> str:
    """One block character per value, scaled between ``lo`` and ``hi`` (clamped)."""
    out = []
    span = (hi - lo) or 1.0
    for v in values:
        f = min(max((v - lo) / span, 0.0), 1.0)
        out.append(BLOCKS[min(int(round(f * (len(BLOCKS) - 1))), len(BLOCKS) - 1)])
    return "".join(out)


def sparkline(values: Sequence[float], width: int = 0) -> str:
    """Bars scaled to the series' max; the last ``width`` values if width > 0."""
    vals = list(values)[-width:] if width > 0 else list(values)
    if not vals:
        return ""
    hi = max(vals)
    return bars(vals, 0.0, hi if hi > 0 else 1.0)


def rate(x: float) -> str:
    """tok/s with one decimal, two below 1 (a slow start does not read as 0.0)."""
    return f"{x:.2f}" if 0 < x < 1 else f"{x:.1f}"


def human_tokens(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 100_000:
        return f"{n / 1000:.1f}k"
    return f"{n // 1000}k"


def drafter_shares(accepted: dict[str, int]) -> list[tuple[str, float]]:
    """Each drafter's share of the accepted draft tokens, largest first."""
    total = sum(v for v in accepted.values() if v > 0)
    if total <= 0:
        return []
    return sorted(((k, v / total) for k, v in accepted.items() if v > 0), key=lambda kv: (-kv[1], kv[0]))


def acceptance_rate(stats: GenStats) -> float:
    drafted = sum(stats.drafted.values())
    return sum(stats.accepted.values()) / drafted if drafted else 0.0


@dataclass(frozen=True)
class StatusField:
    key: str  # stable id: decode, wall, tau, accept, drafters, ceiling, ctx, model
    label: str
    value: str


def status_fields(
    stats: GenStats | None,
    *,
    context_tokens: int = 0,
    context_limit: int = 0,
    model: str = "",
    draft_model: str | None = None,
) -> list[StatusField]:
    """The status bar's fields, in display order."""
    out: list[StatusField] = []
    if stats is not None:
        out.append(StatusField("decode", "decode", f"{rate(stats.decode_tok_s)} tok/s"))
        out.append(StatusField("wall", "wall", f"{rate(stats.wall_tok_s)} tok/s"))
        out.append(StatusField("tau", "τ", f"{stats.tau:.2f}"))
        if stats.accept_by_pos:
            out.append(StatusField("accept", "accept", bars(stats.accept_by_pos)))
        shares = drafter_shares(stats.accepted)
        if shares:
            out.append(StatusField("drafters", "drafts", " ".join(f"{k} {f:.0%}" for k, f in shares)))
        if stats.ceiling_tok_s > 0:
            out.append(StatusField("ceiling", "ceiling", f"{stats.ceiling_frac:.0%}"))
    if context_limit > 0:
        out.append(
            StatusField("ctx", "ctx", f"{human_tokens(context_tokens)}/{human_tokens(context_limit)}")
        )
    if model:
        name = model + (f" + {draft_model}" if draft_model else "")
        out.append(StatusField("model", "model", name))
    return out


def status_line(fields: Sequence[StatusField]) -> str:
    return "  ".join(f"{f.label} {f.value}" for f in fields)


@dataclass
class TurnTotals:
    """The generations of one user turn: their count and their stats summed (GenStats + GenStats)."""

    prompt: str = ""
    generations: int = 0
    stats: GenStats = field(default_factory=GenStats)

    def add(self, s: GenStats) -> None:
        self.generations += 1
        self.stats = self.stats + s

    @property
    def tau(self) -> float:
        return self.stats.tau


@dataclass
class SessionStats:
    """Per-turn totals of a session, fed with each generation's final stats."""

    turns: list[TurnTotals] = field(default_factory=list)
    ceiling_tok_s: float = 0.0

    def start_turn(self, prompt: str) -> None:
        self.turns.append(TurnTotals(prompt=prompt))

    def add(self, stats: GenStats) -> None:
        if not self.turns:
            self.start_turn("")
        self.turns[-1].add(stats)
        if stats.ceiling_tok_s > 0:
            self.ceiling_tok_s = stats.ceiling_tok_s

    @property
    def measured(self) -> list[TurnTotals]:
        return [t for t in self.turns if t.generations]

    def totals(self) -> TurnTotals:
        tot = TurnTotals()
        for t in self.turns:
            tot.generations += t.generations
            tot.stats = tot.stats + t.stats
        return tot

    def report(self, plot_width: int = 40) -> str:
        """A plain-text report: totals, drafters and per-turn plots."""
        total = self.totals()
        tot = total.stats
        turns = self.measured
        lines = [
            f"turns {len(turns)}   generations {total.generations}   "
            f"prompt tokens {human_tokens(tot.prompt_tokens)}   completion tokens {human_tokens(tot.completion_tokens)}",
            f"decode {tot.decode_tok_s:.1f} tok/s   wall {tot.wall_tok_s:.1f} tok/s   τ {tot.tau:.2f}"
            + (f"   ceiling {ceiling_fraction(tot.decode_tok_s, self.ceiling_tok_s):.0%} of {self.ceiling_tok_s:.0f} tok/s" if self.ceiling_tok_s > 0 else ""),
        ]
        drafted = sum(tot.drafted.values())
        if drafted:
            acc = sum(tot.accepted.values())
            lines.append(f"drafted {drafted}   accepted {acc} ({acc / drafted:.0%})")
            for name in sorted(tot.drafted):
                d = tot.drafted[name]
                a = tot.accepted.get(name, 0)
                lines.append(f"  {name:<8} drafted {d:>6}  accepted {a:>6}  ({a / d if d else 0:.0%})")
        if turns:
            lines.append("")
            lines.extend(plot_rows("decode tok/s", [t.stats.decode_tok_s for t in turns], plot_width, "{:.1f}"))
            lines.extend(plot_rows("wall tok/s", [t.stats.wall_tok_s for t in turns], plot_width, "{:.1f}"))
            lines.extend(plot_rows("τ", [t.tau for t in turns], plot_width, "{:.2f}"))
        else:
            lines.append("")
            lines.append("no generations yet")
        return "\n".join(lines)


def plot_rows(title: str, values: Sequence[float], width: int, fmt: str) -> list[str]:
    """A labelled sparkline with its min / last / max."""
    vals = list(values)[-width:]
    if not vals:
        return [f"{title:<13} (none)"]
    spark = sparkline(vals)
    return [
        f"{title:<13} {spark}  last {fmt.format(vals[-1])}  min {fmt.format(min(vals))}  max {fmt.format(max(vals))}"
    ]
