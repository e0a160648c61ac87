"""Turn the data themes of ``themes/`` into Textual themes."""

from __future__ import annotations

from collections.abc import Iterable

from textual.theme import Theme

from themes import ThemeSpec


def to_textual(spec: ThemeSpec) -> Theme:
    return Theme(
        name=spec.name,
        primary=spec.primary,
        secondary=spec.color("secondary") or None,
        accent=spec.color("accent") or None,
        foreground=spec.color("foreground") or None,
        background=spec.color("background") or None,
        surface=spec.color("surface") or None,
        panel=spec.color("panel") or None,
        success=spec.color("success") or None,
        warning=spec.color("warning") or None,
        error=spec.color("error") or None,
        dark=spec.dark,
        variables=dict(spec.variables),
    )


def textual_themes(specs: Iterable[ThemeSpec]) -> list[Theme]:
    return [to_textual(s) for s in specs]
