from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

import pytest

from tools.atomic import atomic_write
from tools.capping import HeadTailBuffer, cap_text
from tools.diffs import diff_stats, make_diff
from tools.textio import NotText, TextFormat, Unencodable, decode, encode, looks_binary


@pytest.mark.parametrize(
    "data",
    [
        b"plain\nunix\n",
        b"windows\r\nline\r\nends\r\n",
        codecs.BOM_UTF8 + "bom \u00e9\n".encode(),
        "caf\u00e9 latin\n".encode("latin-1"),
        b"no final newline",
        b"",
    ],
)
def test_decode_encode_round_trip(data: bytes) -> None:
    decoded = decode(data)
    assert "\r" not in decoded.text
    assert encode(decoded.text, decoded.fmt) == data


def test_detected_formats() -> None:
    assert decode(b"a\r\nb\r\n").fmt == TextFormat("utf-8", False, "\r\n")
    assert decode(codecs.BOM_UTF8 + b"x").fmt.bom
    assert decode(b"caf\xe9\n").fmt.encoding == "latin-1"
    assert decode(b"caf\xe9\n").text == "caf\u00e9\n"


def test_binary_detection() -> None:
    assert looks_binary(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert looks_binary(bytes(range(1, 32)) * 10)
    assert not looks_binary("ünïcödé\ttext\n".encode())
    with pytest.raises(NotText):
        decode(b"ELF\x00\x01")


def test_encode_refuses_characters_latin1_cannot_hold() -> None:
    with pytest.raises(Unencodable, match="latin-1"):
        encode("arrow \u2192", TextFormat("latin-1"))


def test_atomic_write_keeps_mode_and_leaves_no_temp(tmp_path: Path) -> None:
    f = tmp_path / "run.sh"
    f.write_text("old")
    os.chmod(f, 0o750)
    atomic_write(f, b"new")
    assert f.read_bytes() == b"new"
    assert stat.S_IMODE(f.stat().st_mode) == 0o750
    atomic_write(tmp_path / "sub" / "new.txt", b"x")
    assert stat.S_IMODE((tmp_path / "sub" / "new.txt").stat().st_mode) == 0o666 & ~_umask()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh", "sub"]


def test_make_diff() -> None:
    diff = make_diff("a.py", "x = 1\ny = 2\n", "x = 1\ny = 3\n")
    assert diff.startswith("--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n")
    assert "-y = 2\n+y = 3\n" in diff
    assert diff_stats(diff) == (1, 1)
    assert make_diff("a.py", "same", "same") == ""
    created = make_diff("new.txt", "", "hello")
    assert created.startswith("--- /dev/null\n+++ b/new.txt")
    assert "\\ No newline at end of file" in created


def test_cap_text_keeps_head_and_tail() -> None:
    text = "".join(f"line {i}\n" for i in range(10_000))
    capped = cap_text(text, 1000)
    assert capped.startswith("line 0\n") and capped.endswith("line 9999\n")
    assert "characters omitted" in capped and len(capped) < 1100
    assert cap_text("short", 1000) == "short"


def test_head_tail_buffer_is_bounded() -> None:
    buf = HeadTailBuffer(100)
    buf.write(b"HEAD" + b"x" * 46)
    for _ in range(1000):
        buf.write(b"y" * 37)
    buf.write(b"TAIL")
    text = buf.text()
    assert text.startswith("HEAD") and text.endswith("TAIL")
    assert buf.omitted == 50 + 37000 + 4 - 100
    assert f"[... {buf.omitted} bytes omitted ...]" in text
    assert sum(len(c) for c in buf.tail) < 200


def _umask() -> int:
    """The real umask (set and restored here, in the test, not in the code under test)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_current_umask_matches_the_process_umask() -> None:
    from tools.atomic import current_umask

    assert current_umask() == _umask()
