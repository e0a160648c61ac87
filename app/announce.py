"""One resident model: a running ``tau serve`` announces itself in ``runtime_dir()``.

The announce file ``serve-<model key>.json`` holds pid, host, port, model path and whether an
API key is required. It is created exclusively (O_EXCL), so two servers for the same model
cannot both claim it; it is removed when the server exits; a file whose pid is dead is stale
and is ignored (and cleaned up).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from app.config import runtime_dir

PREFIX = "serve-"
DEFAULT_MODEL_KEY = "default"  # cfg.model == "": the default model pack


@dataclass(frozen=True)
class Announcement:
    pid: int
    host: str
    port: int
    model: str  # resolved model path ("" while still unknown)
    model_key: str  # "default" or the real path of the model file
    api_key: bool  # True if the server requires a Bearer key
    model_name: str = ""
    status: str = "ready"  # loading | ready
    started: float = 0.0
    path: str = ""  # the announce file itself (not stored)

    @property
    def url(self) -> str:
        host = self.host
        if host in ("0.0.0.0", ""):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def describe(self) -> str:
        return f"{self.url} (pid {self.pid})"


class AlreadyServing(RuntimeError):
    """Another live ``tau serve`` holds this model."""

    def __init__(self, other: Announcement) -> None:
        self.other = other
        what = "is starting" if other.status == "loading" else "is running"
        super().__init__(
            f"a tau server for this model {what} at {other.describe()}; "
            "attach to it (plain `tau` does), or stop it first"
        )


def model_key(model: str) -> str:
    """How servers are told apart: "default" for the default pack, else the model file's real path."""
    if not model:
        return DEFAULT_MODEL_KEY
    return os.path.realpath(os.path.expanduser(model))


def _file_for(key: str, directory: Path) -> Path:
    return directory / f"{PREFIX}{hashlib.sha1(key.encode()).hexdigest()[:16]}.json"


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _read(path: Path) -> Announcement | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        fields = {k: data[k] for k in ("pid", "host", "port", "model", "model_key", "api_key")}
        return Announcement(**fields, model_name=str(data.get("model_name", "")),
                            status=str(data.get("status", "ready")), started=float(data.get("started", 0.0)),
                            path=str(path))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def running_servers(directory: Path | None = None) -> list[Announcement]:
    """Live servers; stale files (dead pid, unreadable) are removed along the way."""
    directory = directory or runtime_dir()
    out: list[Announcement] = []
    if not directory.is_dir():
        return out
    for path in sorted(directory.glob(f"{PREFIX}*.json")):
        ann = _read(path)
        if ann is None:
            # half-written by a server starting right now? leave young files alone
            with contextlib.suppress(OSError):
                if time.time() - path.stat().st_mtime > 10:
                    path.unlink()
            continue
        if not pid_alive(ann.pid):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        out.append(ann)
    return out


def find_server(model: str, directory: Path | None = None) -> Announcement | None:
    """The live server that runs ``model`` (a cfg.model value: "" = default pack), if any."""
    key = model_key(model)
    for ann in running_servers(directory):
        if ann.model_key == key or (ann.model and model and model_key(ann.model) == key):
            return ann
    return None


def _write_json(path: Path, ann: Announcement, *, exclusive: bool) -> None:
    data = asdict(ann)
    data.pop("path", None)
    text = json.dumps(data, indent=2)
    if exclusive:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)


class Claim:
    """This process's announce file. ``update(...)`` rewrites it; ``release()`` removes it."""

    def __init__(self, path: Path, ann: Announcement) -> None:
        self.path = path
        self.ann = ann
        self.released = False

    def update(self, **changes: object) -> Announcement:
        from dataclasses import replace

        self.ann = replace(self.ann, **changes)  # type: ignore[arg-type]
        _write_json(self.path, self.ann, exclusive=False)
        return self.ann

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        current = _read(self.path)
        if current is None or current.pid == os.getpid():
            with contextlib.suppress(OSError):
                self.path.unlink()

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def claim(model: str, *, host: str, port: int, model_path: str = "", api_key: bool = False,
          model_name: str = "", status: str = "loading", directory: Path | None = None) -> Claim:
    """Claim the model for this process, or raise :class:`AlreadyServing` naming the live holder."""
    directory = directory or runtime_dir()
    directory.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(directory, 0o700)
    key = model_key(model)
    other = find_server(model, directory)
    if other is not None:
        raise AlreadyServing(other)
    path = _file_for(key, directory)
    ann = Announcement(pid=os.getpid(), host=host, port=port, model=model_path, model_key=key, api_key=api_key,
                       model_name=model_name, status=status, started=time.time(), path=str(path))
    for _ in range(3):
        try:
            _write_json(path, ann, exclusive=True)
            return Claim(path, ann)
        except FileExistsError:
            holder = _read(path)
            if holder is not None and pid_alive(holder.pid):
                raise AlreadyServing(holder) from None
            if holder is None:
                with contextlib.suppress(OSError):
                    if time.time() - path.stat().st_mtime < 2:
                        time.sleep(0.2)  # someone is writing it right now
                        continue
            with contextlib.suppress(OSError):
                path.unlink()
    raise RuntimeError(f"could not create the announce file {path}")


@contextlib.contextmanager
def announced(model: str, **kw: object) -> Iterator[Claim]:
    c = claim(model, **kw)  # type: ignore[arg-type]
    try:
        yield c
    finally:
        c.release()
