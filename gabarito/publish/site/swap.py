"""Swap: the new site replaces the old one with two renames, so a failed build leaves the old site.

Concurrent builds into one folder take turns: each swap holds an exclusive ``flock`` on the
folder that holds ``out`` (no lock file is left behind), so two swaps never move each other's
folders away, and ``out`` is always a whole site, the old one or a new one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import uuid
from pathlib import Path
from typing import Iterator

from gabarito.errors import GabaritoError


def _looks_like_site(path: Path) -> bool:
    return not any(path.iterdir()) or (path / "index.html").exists() or (path / "site_libs").is_dir()


@contextlib.contextmanager
def _turn(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (the folder itself, opened read-only)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def swap_in(new: Path, out: Path) -> Path:
    """Replace ``out`` by ``new``: move it beside ``out``, then two renames, one swap at a time.
    A file system error is one line naming ``out``; ``out`` is then left as it was."""
    out = Path(out).resolve()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with _turn(out.parent):
            return _swap(Path(new), out)
    except OSError as exc:
        raise GabaritoError(f"cannot put the new site in place ({exc.strerror or exc})", path=out) from None


def _swap(new: Path, out: Path) -> Path:
    if out.exists() and (not out.is_dir() or not _looks_like_site(out)):
        raise GabaritoError("output folder exists and is not a built site; refusing to replace it", path=out)
    tag = uuid.uuid4().hex[:8]
    incoming = out.parent / f".{out.name}.new-{tag}"
    try:
        os.replace(new, incoming)
    except OSError:  # another file system
        shutil.copytree(new, incoming, symlinks=True)
    old = out.parent / f".{out.name}.old-{tag}" if out.exists() else None
    try:
        if old is not None:
            os.replace(out, old)
        os.replace(incoming, out)
    except BaseException:
        if old is not None and old.exists() and not out.exists():
            os.replace(old, out)
        shutil.rmtree(incoming, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return out
