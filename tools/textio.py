"""Text files as the model sees them (str with '\\n' line ends) and as they are on disk
(encoding, BOM, CRLF). Pure functions: decode bytes, encode text back the same way."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

BINARY_SNIFF = 8192
_TEXT_CONTROL = {7, 8, 9, 10, 12, 13, 27}


class NotText(ValueError):
    """Bytes that are not a text file (binary content)."""


class Unencodable(ValueError):
    """Text that cannot be stored in the file's encoding."""


@dataclass(frozen=True)
class TextFormat:
    encoding: str = "utf-8"  # 'utf-8' | 'latin-1'
    bom: bool = False
    newline: str = "\n"  # '\n' | '\r\n' | '\r'


@dataclass(frozen=True)
class DecodedText:
    text: str  # '\n' line ends, no BOM
    fmt: TextFormat


def looks_binary(data: bytes) -> bool:
    """NUL bytes or mostly control characters in the first 8 KiB (UTF-16 counts as binary)."""
    head = data[:BINARY_SNIFF]
    if not head:
        return False
    if b"\x00" in head:
        return True
    ctrl = sum(1 for b in head if b < 32 and b not in _TEXT_CONTROL)
    return ctrl / len(head) > 0.10


def detect_newline(text: str) -> str:
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    if crlf > lf and crlf >= cr:
        return "\r\n"
    if cr > lf and cr > crlf:
        return "\r"
    return "\n"


def decode(data: bytes) -> DecodedText:
    """Decode file bytes: UTF-8 (with or without BOM), falling back to latin-1. Raises NotText."""
    if looks_binary(data):
        raise NotText("binary file")
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    try:
        raw, encoding = body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        raw, encoding = body.decode("latin-1"), "latin-1"
    newline = detect_newline(raw)
    text = raw.replace("\r\n", "\n").replace("\r", "\n") if "\r" in raw else raw
    return DecodedText(text, TextFormat(encoding, bom, newline))


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def encode(text: str, fmt: TextFormat) -> bytes:
    """Bytes of ``text`` ('\\n' line ends) in the file's own encoding, BOM and line ends."""
    text = normalize_newlines(text)
    if fmt.newline != "\n":
        text = text.replace("\n", fmt.newline)
    try:
        body = text.encode(fmt.encoding)
    except UnicodeEncodeError as e:
        bad = text[e.start : e.end]
        raise Unencodable(
            f"the file is {fmt.encoding}-encoded and cannot hold {bad!r}; use characters it can store"
        ) from e
    return (codecs.BOM_UTF8 if fmt.bom else b"") + body
