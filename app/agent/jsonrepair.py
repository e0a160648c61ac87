"""Lenient JSON lives with the wire formats (app.wire.jsonrepair); this name stays for old imports."""

from app.wire.jsonrepair import loads_lenient

__all__ = ["loads_lenient"]
