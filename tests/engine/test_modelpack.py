"""Model pack assembly from part packages, on small fake packages written by the test."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from engine import modelpack
from engine.modelpack import ModelPackError, PackModel, ensure


def make_pack(root: Path, prefix: str, chunks: list[bytes]) -> None:
    for i, chunk in enumerate(chunks, start=1):
        pkg = root / f"{prefix}{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)


@pytest.fixture
def pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    site = tmp_path / "site"
    chunks = [b"GGUF" + bytes(range(200)) * 50, bytes(range(256)) * 40, b"tail" * 333]
    prefix = f"fakepack_{tmp_path.name.replace('-', '_')}_part"
    make_pack(site, prefix, chunks)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("TAU_CACHE_DIR", str(tmp_path / "cache"))
    whole = b"".join(chunks)
    model = PackModel("target", "fake.gguf", prefix, 3, len(whole), hashlib.sha256(whole).hexdigest(), "fake model")
    yield model, whole, site
    for i in range(1, 4):
        sys.modules.pop(f"{prefix}{i}", None)


def test_assembles_verifies_and_reports_progress(pack) -> None:
    model, whole, _ = pack
    seen: list[float] = []
    path = ensure(model, lambda _label, f: seen.append(f))
    assert path.read_bytes() == whole
    assert seen and seen[-1] == 1.0
    assert modelpack.is_ready(model)
    assert ensure(model) == path  # second call: nothing to do
    assert not list(path.parent.glob(".*partial"))


def test_damaged_pack_leaves_no_model(pack) -> None:
    model, _, site = pack
    part = site / f"{model.package_prefix}2" / "data" / "part02.bin"
    part.write_bytes(b"x" * part.stat().st_size)
    with pytest.raises(ModelPackError, match="damaged"):
        ensure(model)
    dest = modelpack.pack_path(model)
    assert not dest.exists()
    assert not list(dest.parent.glob(".*partial"))


def test_missing_parts_name_the_install_command(pack) -> None:
    model, _, _ = pack
    bad = PackModel("target", "x.gguf", "no_such_pack_part", 2, 1, "0" * 64, "absent model")
    with pytest.raises(ModelPackError, match=r"pip install 'tau-agent\[models\]'"):
        ensure(bad)
    assert model.part_modules()[0].endswith("1")


def test_interrupted_assembly_leaves_no_model(pack, monkeypatch: pytest.MonkeyPatch) -> None:
    model, _, _ = pack

    def boom(_label: str, f: float) -> None:
        if f > 0.3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ensure(model, boom)
    dest = modelpack.pack_path(model)
    assert not dest.exists() and not list(dest.parent.glob(".*partial"))
