"""TUI themes as data.

Each theme is a TOML file: ``name``, ``dark`` and colours (``primary``, ``secondary``,
``accent``, ``foreground``, ``background``, ``surface``, ``panel``, ``success``,
``warning``, ``error``), plus an optional ``[variables]`` table of extra Textual CSS
variables. The built-in themes live next to this module; user themes are read from a
directory the caller names (the app's is ``<config dir>/themes``) and may override a
built-in theme of the same name.

This module is plain data: it does not import Textual (``app.tui.theme`` turns a
:class:`ThemeSpec` into a ``textual.theme.Theme``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

BUILTIN_DIR = Path(__file__).resolve().parent
DEFAULT_THEME = "tau-dark"
COLOR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "success",
    "warning",
    "error",
)
_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class ThemeError(ValueError):
    """A theme file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class ThemeSpec:
    name: str
    primary: str
    dark: bool = True
    colors: dict[str, str] = field(default_factory=dict)  # the COLOR_KEYS present besides primary
    variables: dict[str, str] = field(default_factory=dict)
    source: str = ""  # the file it came from

    def color(self, key: str, default: str = "") -> str:
        if key == "primary":
            return self.primary
        return self.colors.get(key, default)


def parse_theme(text: str, source: str = "<string>") -> ThemeSpec:
    """Parse one theme file's text; raises :class:`ThemeError` with a readable message."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ThemeError(f"theme {source}: not valid TOML: {e}") from None
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ThemeError(f"theme {source}: 'name' must be a simple name like 'my-theme'")
    primary = data.get("primary")
    if not isinstance(primary, str) or not _HEX.match(primary):
        raise ThemeError(f"theme {source}: 'primary' must be a colour like '#5FAFFF'")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeError(f"theme {source}: 'dark' must be true or false")
    colors: dict[str, str] = {}
    for key in COLOR_KEYS[1:]:
        if key in data:
            value = data[key]
            if not isinstance(value, str) or not _HEX.match(value):
                raise ThemeError(f"theme {source}: {key!r} must be a colour like '#1B1F24', got {value!r}")
            colors[key] = value
    unknown = set(data) - set(COLOR_KEYS) - {"name", "dark", "variables"}
    if unknown:
        raise ThemeError(f"theme {source}: unknown key(s) {', '.join(sorted(unknown))}")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ThemeError(f"theme {source}: [variables] must map names to strings")
    return ThemeSpec(name=name, primary=primary, dark=dark, colors=colors, variables=dict(variables), source=source)


def load_theme_file(path: Path) -> ThemeSpec:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ThemeError(f"theme {path}: cannot read: {e}") from None
    return parse_theme(text, str(path))


def builtin_themes() -> dict[str, ThemeSpec]:
    out: dict[str, ThemeSpec] = {}
    for path in sorted(BUILTIN_DIR.glob("*.toml")):
        spec = load_theme_file(path)
        out[spec.name] = spec
    return out


def load_themes(user_dir: Path | None = None) -> tuple[dict[str, ThemeSpec], list[str]]:
    """All themes (built-in, then those of ``user_dir`` overriding by name) and the errors of bad user files."""
    themes = builtin_themes()
    errors: list[str] = []
    if user_dir is not None and user_dir.is_dir():
        for path in sorted(user_dir.glob("*.toml")):
            try:
                spec = load_theme_file(path)
            except ThemeError as e:
                errors.append(str(e))
                continue
            themes[spec.name] = spec
    return themes, errors


__all__ = [
    "BUILTIN_DIR",
    "DEFAULT_THEME",
    "ThemeError",
    "ThemeSpec",
    "builtin_themes",
    "load_theme_file",
    "load_themes",
    "parse_theme",
]
