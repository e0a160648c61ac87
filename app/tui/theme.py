"""Turn the data themes of ``themes/`` into Textual themes."""

from __future__ import annotations

from pathlib import Path

from textual.theme import Theme

from themes import ThemeSpec, load_themes


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


def textual_themes(user_dir: Path | None = None) -> tuple[list[Theme], list[str]]:
    specs, errors = load_themes(user_dir)
    return [to_textual(s) for s in specs.values()], errors
