"""Content hashes and atomic writes: the two primitives every record relies on."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def file_mode(mode: int = 0o666) -> int:
    """``mode`` as the process umask leaves it: what ``open()`` or ``mkdir()`` would create
    (``0o666`` for files, ``0o777`` for folders)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return mode & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # no /proc: read the umask by setting it (and putting it back)
    os.umask(mask)
    return mode & ~mask


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to a temp file beside ``path``, fsync it and rename it into place; the file's
    mode follows the umask (a temp file is created 0600)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _naming(exc, path) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise _naming(exc, path) from exc
        raise
    return path


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` naming ``path``, the file asked for, rather than its temporary file beside it."""
    if exc.errno is None or exc.filename == str(path):
        return exc
    return type(exc)(exc.errno, exc.strerror, str(path))


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: object) -> Path:
    text = json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=False) + "\n"
    return atomic_write_text(path, text)
