"""Swap: the new site replaces the old one with two renames, so a failed build leaves the old site."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from gabarito.errors import GabaritoError


def _looks_like_site(path: Path) -> bool:
    return not any(path.iterdir()) or (path / "index.html").exists() or (path / "site_libs").is_dir()


def swap_in(new: Path, out: Path) -> Path:
    """Replace ``out`` by ``new``: move it beside ``out``, then two renames."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and (not out.is_dir() or not _looks_like_site(out)):
        raise GabaritoError("output folder exists and is not a built site; refusing to replace it", path=out)
    tag = uuid.uuid4().hex[:8]
    incoming = out.parent / f".{out.name}.new-{tag}"
    try:
        os.replace(new, incoming)
    except OSError:  # another file system
        shutil.copytree(new, incoming, symlinks=True)
    old = out.parent / f".{out.name}.old-{tag}" if out.exists() else None
    if old is not None:
        os.replace(out, old)
    try:
        os.replace(incoming, out)
    except BaseException:
        if old is not None:
            os.replace(old, out)
        shutil.rmtree(incoming, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return out
