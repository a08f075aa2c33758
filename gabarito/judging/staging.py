"""The judging commands' files written all together or not at all.

A command writes every file it makes into a hidden staging folder beside their destination
(:func:`staging`), then :func:`place` links them into place one after the other with Ctrl-C,
SIGTERM and SIGHUP held back, the freeze manifest last; a name already taken (another command
with the same ``--out`` got there first) is refused, never overwritten, unless the caller allows
it, and a failure part way removes what was placed (and puts back a file it replaced). The
staging folder is removed on the way out, whatever happens, so no temporary file is left
behind: :func:`terminations_exit` turns SIGTERM and SIGHUP into ``SystemExit(128 + signal)``
so that this clean-up runs for them too.

A disk that refuses a write (full, read-only, no permission) is one line naming the file that
could not be written, with nothing written.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_json, atomic_write_text
from gabarito.inputs.gold import freeze

HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _exit_on(signum, _frame) -> None:
    raise SystemExit(128 + signum)


def terminations_exit() -> None:
    """SIGTERM and SIGHUP (when left at their defaults) raise ``SystemExit(128 + signal)`` in the
    main thread, so that ``finally`` blocks remove temporary files (the exit status stays 143, 129)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _exit_on)


def _unwritable(exc: OSError, path: Path) -> GabaritoError:
    """The one line for a write the disk refused, naming the final file (never a temporary one)."""
    return GabaritoError(f"cannot be written ({exc.strerror or exc}); nothing was written", path=path)


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet, outermost first."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing[::-1]


class Stage:
    """Files written into a hidden staging folder, then placed together in ``folder``."""

    def __init__(self, path: Path, folder: Path):
        self.path, self.folder = path, folder

    def _write(self, name: str, write) -> Path:
        try:
            return write(self.path / name)
        except OSError as exc:
            raise _unwritable(exc, self.folder / name) from None

    def write_text(self, name: str, text: str) -> Path:
        return self._write(name, lambda p: atomic_write_text(p, text))

    def write_json(self, name: str, obj: object) -> Path:
        return self._write(name, lambda p: atomic_write_json(p, obj))

    def freeze(self, name: str, names: Sequence[str], note: str) -> Path:
        """The freeze manifest ``name`` of the staged files ``names`` (paths relative to the folder)."""
        def write(path: Path) -> Path:
            freeze(path, [self.path / n for n in names], note=note)
            return path
        return self._write(name, write)

    def place(self, names: Sequence[str], *, replace: Sequence[str] = ()) -> list[Path]:
        return place(self.path, self.folder, names, replace=replace)


@contextmanager
def staging(folder: str | Path) -> Iterator[Stage]:
    """A fresh hidden folder inside ``folder`` (created if needed) to write files into before
    :func:`place`; removed on the way out with what is left in it, and so is ``folder`` when this
    made it and nothing was placed in it. A refused write becomes one line naming the file."""
    folder = Path(folder)
    created = _missing_folders(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=".gabarito-", suffix=".staging", dir=folder))
    except OSError as exc:
        _remove_empty(created)
        raise GabaritoError(f"cannot write into this folder ({exc.strerror or exc}); nothing was written",
                            path=folder) from None
    try:
        yield Stage(stage, folder)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        _remove_empty(created)


def _remove_empty(folders: Sequence[Path]) -> None:
    """Remove the folders this command made, innermost first, as long as they are empty."""
    for made in reversed(folders):
        try:
            made.rmdir()
        except OSError:
            break


@contextmanager
def held_signals() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block is done (then act as usual)."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    except (AttributeError, ValueError):  # no sigmask on this platform
        old = None
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _link(src: Path, dst: Path) -> None:
    """``dst`` becomes ``src`` unless it exists (never overwritten)."""
    try:
        os.link(src, dst)
    except FileExistsError:
        raise GabaritoError("already exists (written meanwhile by another command with the same --out?); "
                            "it is never overwritten: nothing was written", path=dst) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS):
            raise
        if dst.exists():  # a file system without hard links: check, then rename
            raise GabaritoError("already exists; it is never overwritten: nothing was written", path=dst) from None
        os.rename(src, dst)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _undo(placed: Sequence[tuple[Path, tuple[int, int] | None]], kept: Sequence[tuple[Path, Path]]) -> None:
    """Remove what was placed (only a file that is still ours: never a rival's of the same name),
    then put back the files it replaced."""
    for path, ident in placed:
        if ident is not None and _identity(path) == ident:
            try:
                path.unlink()
            except OSError:
                pass
    for aside, dst in kept:
        try:
            os.replace(aside, dst)
        except OSError:
            pass


def place(stage: Path, folder: str | Path, names: Sequence[str], *, replace: Sequence[str] = ()) -> list[Path]:
    """Put ``stage/name`` at ``folder/name`` for each name, in order (the freeze manifest last),
    all or none. A name in ``replace`` may replace an existing file (kept aside and put back on a
    failure); any other existing name is refused. Returns the placed paths."""
    folder = Path(folder)
    placed: list[tuple[Path, tuple[int, int] | None]] = []
    kept: list[tuple[Path, Path]] = []
    with held_signals():
        try:
            for name in names:
                dst = folder / name
                placed.append((dst, _identity(stage / name)))  # before: an interruption may follow the link
                if name in replace:
                    if dst.exists():
                        aside = stage / f".previous-{name}"
                        os.link(dst, aside)
                        kept.append((aside, dst))
                    os.replace(stage / name, dst)
                else:
                    _link(stage / name, dst)
        except BaseException as exc:
            _undo(placed, kept)
            if isinstance(exc, OSError):
                raise _unwritable(exc, folder / name) from None
            raise
    return [dst for dst, _ in placed]
