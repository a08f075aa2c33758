"""Run ``python -m gabarito.cli`` on a disk that fails under one folder (for the judging fault tests).

    python faulty_disk.py FOLDER MODE N -- gabarito arguments...

Only paths under FOLDER are touched by the fault; everything else (Python's own files, the
inputs elsewhere) behaves normally. MODE:

* ``full``: the disk holds N more bytes: the write that passes them writes what fits, then
  raises ``OSError(ENOSPC)`` (as a full disk does);
* ``readonly``: creating, opening for writing, linking, renaming or removing anything under
  FOLDER raises ``OSError(EROFS)`` (tests run as root, which ignores permission bits);
* ``stop``: the N-th file put in place under FOLDER (a rename, replace or link onto a path with
  no hidden part below FOLDER) is followed by ``KeyboardInterrupt``, as a Ctrl-C at that instant would be;
* ``hang``: after N bytes the writing blocks for good, after printing ``HANG`` on stderr (a
  slow disk: the test then sends a signal);
* ``taken``: just before the N-th file is put in place under FOLDER, another process (the
  loser's rival in a race for the same ``--out``) writes a file of that name holding ``rival``.

Nothing here imports gabarito before the faults are installed.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import runpy
import sys
import time

FOLDER = os.path.realpath(sys.argv[1])
MODE = sys.argv[2]
BUDGET = [int(sys.argv[3])]
PLACED = [0]
_open, _os_open, _fdopen = builtins.open, os.open, os.fdopen
_mkdir, _link, _rename, _replace, _unlink, _rmdir = os.mkdir, os.link, os.rename, os.replace, os.unlink, os.rmdir


def _under(path) -> bool:
    if isinstance(path, int):
        try:
            path = os.readlink(f"/proc/self/fd/{path}")
        except OSError:
            return False
    try:
        real = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return False
    return real == FOLDER or real.startswith(FOLDER + os.sep)


def _visible(path) -> bool:
    """A final place under FOLDER: no part of the path below FOLDER is hidden (a temporary file or
    a staging folder is)."""
    rel = os.path.relpath(os.path.realpath(os.fsdecode(path)), FOLDER)
    return _under(path) and not any(part.startswith(".") for part in rel.split(os.sep))


def _refuse(path) -> None:
    raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(path) if not isinstance(path, int) else None)


class _Writer:
    """A file object whose writes spend the disk's budget."""

    def __init__(self, fh, name):
        self._fh, self._name = fh, name

    def write(self, data):
        size = len(data)
        if MODE == "hang" and size >= BUDGET[0]:
            self._fh.write(data[:BUDGET[0]])
            self._fh.flush()
            sys.stderr.write("HANG\n")
            sys.stderr.flush()
            while True:
                time.sleep(0.05)
        if MODE == "full" and size > BUDGET[0]:
            self._fh.write(data[:BUDGET[0]])
            BUDGET[0] = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self._name)
        BUDGET[0] -= size
        return self._fh.write(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()

    def __iter__(self):
        return iter(self._fh)

    def __getattr__(self, name):
        return getattr(self._fh, name)


def _writing(mode) -> bool:
    return any(c in str(mode) for c in "wax+")


def faulty_open(file, mode="r", *args, **kwargs):
    if _writing(mode) and _under(file):
        if MODE == "readonly":
            _refuse(file)
        if MODE in ("full", "hang"):
            return _Writer(_open(file, mode, *args, **kwargs), os.fsdecode(file) if not isinstance(file, int) else None)
    return _open(file, mode, *args, **kwargs)


def faulty_fdopen(fd, mode="r", *args, **kwargs):
    fh = _fdopen(fd, mode, *args, **kwargs)
    if _writing(mode) and MODE in ("full", "hang") and _under(fd):
        return _Writer(fh, None)
    return fh


def faulty_os_open(path, flags, *args, **kwargs):
    if MODE == "readonly" and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and _under(path):
        _refuse(path)
    return _os_open(path, flags, *args, **kwargs)


def _guard(real, *, placing: bool = False):
    def call(*args, **kwargs):
        paths = [a for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))]
        if MODE == "readonly" and any(_under(p) for p in paths):
            _refuse(paths[-1])
        target = os.fsdecode(paths[-1]) if paths else ""
        if placing and MODE == "taken" and _visible(target):
            PLACED[0] += 1
            if PLACED[0] == BUDGET[0]:
                with _open(target, "w") as fh:
                    fh.write("rival")
        out = real(*args, **kwargs)
        if placing and MODE == "stop" and _visible(target):
            PLACED[0] += 1
            if PLACED[0] == BUDGET[0]:
                raise KeyboardInterrupt
        return out
    return call


builtins.open = io.open = faulty_open
os.fdopen = faulty_fdopen
os.open = faulty_os_open
os.mkdir, os.unlink, os.rmdir = _guard(_mkdir), _guard(_unlink), _guard(_rmdir)
os.link, os.rename = _guard(_link, placing=True), _guard(_rename, placing=True)
os.replace = _guard(_replace, placing=True)

sys.argv = ["gabarito", *sys.argv[sys.argv.index("--") + 1:]]
runpy.run_module("gabarito.cli", run_name="__main__", alter_sys=True)
