"""The whole report as one download: the tracked tree at the built commit.

Every site build puts under ``downloads/fonte/``:

* ``gabarito-<commit>.tar.gz`` (``<commit>``: the commit's first 12 hex digits): ``git archive
  --format=tar.gz --prefix=gabarito-<commit>/ HEAD``, with one more file, ``ARCHIVE_COMMIT`` (the
  full commit, one line), so that a tree unpacked from it knows which archive it is;
* ``gabarito-<commit>.tar.gz.sha256``: its sha256, in the format ``sha256sum -c`` reads.

What the build offers depends on the tree it runs in (:func:`source_of`):

* **a git checkout** (the project folder is the top of its work tree): the archive of ``HEAD``.
  When tracked files have uncommitted changes the archive is still ``HEAD``, not the tree, and
  every "Reproduzir" says so;
* **a tree unpacked from such an archive** (no git, ``ARCHIVE_COMMIT`` present): the pages name
  the same archive. The archive itself is offered when it lies beside the tree
  (``../gabarito-<commit>.tar.gz``, where a reader who downloaded and unpacked it has it) and
  carries the same ``ARCHIVE_COMMIT``; otherwise the pages name it without a link. A tree cannot
  rebuild the archive's bytes, so it never makes a new one;
* **anything else** (a copy with neither): no archive, and the pages say so.

A chapter's executed notebook is cached by its inputs, not by the commit (a commit that touches
no page input must not run every notebook again), so :func:`reproduce_block` leaves slots that
:func:`fill_pages` fills in the rendered pages with this build's archive.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gabarito.errors import GabaritoError
from gabarito.publish.packages import sum_lines

#: The folder of ``downloads/`` that holds the archive and its sum.
FOLDER = "fonte"
#: The file the archive carries: the commit it was made from.
COMMIT_FILE = "ARCHIVE_COMMIT"
#: How many hex digits of the commit name the archive.
SHORT = 12
#: The neutral example of a data mirror the pages show (never a machine's own folder).
MIRROR_EXAMPLE = "~/dados/gabarito"

_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class SourceArchive:
    """Which archive a build names: ``origin`` is ``"git"``, ``"archive"`` (an unpacked tree) or
    ``"none"``; ``dirty``: tracked files differed from the commit; ``offered``: the archive file is
    among the build's downloads."""

    commit: str | None
    origin: str
    dirty: bool = False
    offered: bool = False

    @property
    def folder(self) -> str | None:
        """The archive's top folder, ``gabarito-<commit>``."""
        return f"gabarito-{self.commit[:SHORT]}" if self.commit else None

    @property
    def name(self) -> str | None:
        return f"{self.folder}.tar.gz" if self.commit else None


def is_git_top(root: Path) -> bool:
    """Whether ``root`` is the top folder of a git work tree (not a folder inside another one's)."""
    try:
        top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return top.returncode == 0 and Path(top.stdout.strip()).resolve() == Path(root).resolve()


def _carried_commit(root: Path) -> str | None:
    """The commit in the ``ARCHIVE_COMMIT`` of a tree unpacked from an archive, or ``None``."""
    path = Path(root) / COMMIT_FILE
    if not path.is_file():
        return None
    value = path.read_text(encoding="utf-8", errors="replace").strip()
    if not _COMMIT.fullmatch(value):
        raise GabaritoError("expected the 40 hex digits of a commit, one line", path=path)
    return value


def source_of(root: str | Path) -> SourceArchive:
    """Which archive the tree at ``root`` is (see the module's docstring); offers nothing yet."""
    from gabarito.study.records import git_state

    root = Path(root).resolve()
    if is_git_top(root):
        state = git_state(root)
        if state.get("commit"):
            return SourceArchive(state["commit"], "git", dirty=bool(state.get("dirty")))
    commit = _carried_commit(root)
    return SourceArchive(commit, "archive") if commit else SourceArchive(None, "none")


def archive_commit(path: str | Path) -> str | None:
    """The ``ARCHIVE_COMMIT`` an archive carries at its top folder, or ``None``."""
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                if member.isfile() and PurePosixPath(member.name).parts[1:] == (COMMIT_FILE,):
                    return tar.extractfile(member).read().decode("utf-8", "replace").strip()
    except (OSError, tarfile.TarError, EOFError):
        return None
    return None


def write_sum(path: Path) -> Path:
    """``<path>.sha256`` beside ``path``: its sha256 and name, as ``sha256sum -c`` reads them."""
    out = path.with_name(path.name + ".sha256")
    out.write_text(sum_lines([path]), encoding="utf-8")
    return out


def _git_archive(root: Path, source: SourceArchive, dest: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="gabarito-archive-") as tmp:
        carried = Path(tmp) / COMMIT_FILE
        carried.write_text(source.commit + "\n", encoding="utf-8")
        part = dest.with_name(f".{dest.name}.part")
        # tar.umask 022: files 0644 and scripts 0755, as a checkout has them (git's default, 002,
        # would give 0664, and tar run by root keeps the archive's modes)
        run = subprocess.run(["git", "-C", str(root), "-c", "tar.umask=022", "archive", "--format=tar.gz",
                              f"--prefix={source.folder}/", f"--add-file={carried}", "-o", str(part), source.commit],
                             capture_output=True, text=True)
        if run.returncode != 0:
            part.unlink(missing_ok=True)
            tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no output"]
            raise GabaritoError(f"git archive failed: {tail[0]}", path=root)
        os.replace(part, dest)


def add_source_archive(root: str | Path, downloads: str | Path) -> SourceArchive:
    """Put the archive and its sum under ``downloads/fonte/`` when the tree can offer it; return
    which archive the pages name (:attr:`SourceArchive.offered` says whether it is there)."""
    root, folder = Path(root).resolve(), Path(downloads) / FOLDER
    source = source_of(root)
    if source.origin == "none":
        return source
    dest = folder / source.name
    if source.origin == "git":
        folder.mkdir(parents=True, exist_ok=True)
        _git_archive(root, source, dest)
    else:
        beside = root.parent / source.name
        if not beside.is_file() or archive_commit(beside) != source.commit:
            return source
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(beside, dest)
    write_sum(dest)
    return SourceArchive(source.commit, source.origin, source.dirty, offered=True)


def describe(source: SourceArchive) -> str:
    """One line for the build's log: which archive the downloads hold, or why none."""
    if source.origin == "none":
        return "no source archive: not a git checkout, and no ARCHIVE_COMMIT (pages say so)"
    if not source.offered:
        return (f"source archive {source.name} named by {COMMIT_FILE} but not beside the tree "
                f"({source.name} in the parent folder): pages name it without a link")
    dirty = "; tracked files have uncommitted changes: the archive is the commit, not the tree (pages say so)"
    return f"source archive {source.name}" + (dirty if source.dirty else "")
