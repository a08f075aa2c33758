"""Results integrity: every results file's sha256, recorded by the run that wrote it.

A study folder keeps one manifest, ``results.sha256.json``::

    {"schema": 1, "files": {"results.json": {"sha256": "...", "recorded": "<date>"}, ...}}

:func:`record` is called by the writers of results files (:func:`gabarito.study.records.write_results`
and :func:`gabarito.study.records.write_measurement`) right after the atomic write, under a lock on
the manifest, so two writers in one folder never lose each other's entry. :func:`verify` is what the
site build, ``gabarito report`` and the pages call before reading a results file: a file changed
after its run (by hand, by a merge, by a half-finished copy) is refused in one line naming it, and so
is a results file no run recorded. ``gabarito studies`` shows such a file as modified.

:func:`tree_problems` extends the guard to a whole study folder: every file a manifest under it
records, every run folder of ``gabarito evaluate`` (a folder holding ``run.json``: each of its files
recorded in its own manifest) and the run logs beside run folders (``*.jsonl``). A folder written
before manifests existed is read without one only when it is listed in :data:`LEGACY_FOLDERS` (a
user's own old runs listed in ``$GABARITO_LEGACY_FOLDERS`` count for ``gabarito compare`` only, never
for this guard): a missing manifest is never taken for an old folder. The files :data:`GUARDED` names (the TREC runs, qrels and logs the site offers for
download, the assessors' grades, the writers' packets, the assessors' guide a page quotes) must each
be recorded: in its folder's manifest, or in the ``files`` of a freeze manifest (``*.lock.json``)
under the folder checked, which then holds its sha256.
"""

from __future__ import annotations

import contextlib
import fcntl
import fnmatch
import json
import os
from pathlib import Path
from typing import Iterator

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.paths import ROOT

MANIFEST = "results.sha256.json"
SCHEMA = 1
#: Folders written before results manifests existed, relative to the project root: the only ones
#: whose files are trusted without a manifest. None of the committed folders is one.
LEGACY_FOLDERS: frozenset[str] = frozenset()
#: A user's own folders older than manifests, listed explicitly (``os.pathsep``-separated).
LEGACY_ENV = "GABARITO_LEGACY_FOLDERS"
#: The file that makes a folder a run folder of ``gabarito evaluate``.
RUN_RECORD = "run.json"
#: Files a page reads or a command trusts besides results: each must be recorded by the run that
#: wrote it, or frozen (paths under the folder checked, ``**`` any number of folders, ``*`` any name
#: in one). The runs, qrels and logs a chapter offers for download (``runs/``, ``qrels/``), the
#: assessors' grades, the packets a question writer received, and the guide the assessors read (a
#: page quotes it).
GUARDED = ("**/runs/**", "**/qrels/**", "**/grades/**", "**/protocols/packet_*.json", "**/guia_de_avaliacao.md")
#: Freeze manifests: ``{"files": {path relative to the manifest's folder: sha256}}``.
FREEZE_GLOB = "*.lock.json"


def manifest_path(results_path: str | Path) -> Path:
    return Path(results_path).parent / MANIFEST


@contextlib.contextmanager
def _locked(manifest: Path) -> Iterator[None]:
    """An exclusive lock on the manifest's folder itself (no lock file left in the user's folder)."""
    fd = os.open(manifest.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def read_manifest(manifest: str | Path) -> dict[str, dict]:
    """``{file name: {"sha256", "recorded"}}`` of a manifest; ``{}`` when there is none."""
    manifest = Path(manifest)
    if not manifest.exists():
        return {}
    try:
        raw = json.loads(manifest.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise GabaritoError("the results manifest is not valid JSON: restore it from git or rerun the "
                            "studies of this folder", path=manifest) from None
    files = raw.get("files") if isinstance(raw, dict) else None
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA or not isinstance(files, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("sha256"), str) for v in files.values()):
        raise GabaritoError(f"not a results manifest of schema {SCHEMA}", path=manifest)
    return files


def record(results_path: str | Path, *, when: str) -> str:
    """Record the sha256 of ``results_path`` (just written at ``when``) in its folder's manifest;
    return it."""
    results_path = Path(results_path)
    manifest = manifest_path(results_path)
    digest = sha256_file(results_path)
    with _locked(manifest):
        files = read_manifest(manifest)
        files[results_path.name] = {"sha256": digest, "recorded": when}
        atomic_write_json(manifest, {"schema": SCHEMA, "files": dict(sorted(files.items()))})
    return digest


def state(results_path: str | Path) -> str | None:
    """Why ``results_path`` cannot be trusted as its run wrote it, or ``None`` when it can."""
    results_path = Path(results_path)
    entry = read_manifest(manifest_path(results_path)).get(results_path.name)
    if not results_path.exists():
        return "missing"
    if entry is None:
        return f"modified: no run recorded it in {MANIFEST}"
    now = sha256_file(results_path)
    if now != entry["sha256"]:
        return (f"modified after its run (sha256 {entry['sha256'][:12]}… recorded {entry.get('recorded', '?')}, "
                f"{now[:12]}… now)")
    return None


def verify(results_path: str | Path) -> None:
    """Refuse, in one line naming the file, a results file that is not the one its run wrote."""
    why = state(results_path)
    if why == "missing":
        raise GabaritoError("file not found", path=results_path)
    if why is not None:
        raise GabaritoError(f"{why}: rerun the study that writes it (gabarito study NAME) or restore it "
                            "with git", path=results_path)


def is_legacy(folder: str | Path, *, user: bool = False) -> bool:
    """Whether ``folder`` is listed as written before manifests: in :data:`LEGACY_FOLDERS` (relative to
    the project root), or, with ``user`` (``gabarito compare`` reading a user's own run folders), in
    ``$GABARITO_LEGACY_FOLDERS``. The guard over the committed report (:func:`tree_problems`: ``site``,
    ``report``, ``studies``) never reads the variable: setting it must not switch the guard off."""
    folder = Path(folder).resolve()
    listed = {(ROOT / rel).resolve() for rel in LEGACY_FOLDERS}
    if user:
        listed |= {Path(p).resolve() for p in os.environ.get(LEGACY_ENV, "").split(os.pathsep) if p.strip()}
    return folder in listed


def folder_problems(folder: str | Path) -> Iterator[tuple[Path, str]]:
    """``(file, why)`` for each file of a run folder that is not as its run wrote it: the manifest
    missing (unless the folder is listed as legacy), a file unrecorded, changed or gone."""
    folder = Path(folder)
    if is_legacy(folder):
        return
    if not (folder / MANIFEST).is_file():
        yield folder / MANIFEST, "missing: nothing records what the run wrote here"
        return
    files = read_manifest(folder / MANIFEST)
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.name != MANIFEST and not path.name.startswith(".") and path.name not in files:
            yield path, f"unrecorded: not in {MANIFEST}, so no run wrote it"
    for name in sorted(files):
        why = state(folder / name)
        if why not in (None, "missing"):  # a file not there is read by no one (its readers refuse it)
            yield folder / name, why


def path_matches(pattern: str | tuple[str, ...], segments: tuple[str, ...]) -> bool:
    """Whether ``segments`` (a path split at ``/``) match ``pattern`` (``/``-separated, anchored at
    both ends): ``**`` is any number of segments, any other segment a shell pattern for one."""
    pattern = tuple(pattern.split("/")) if isinstance(pattern, str) else pattern
    if not pattern:
        return not segments
    if pattern[0] == "**":
        return any(path_matches(pattern[1:], segments[i:]) for i in range(len(segments) + 1))
    return bool(segments) and (pattern[0] == segments[0] or fnmatch.fnmatchcase(segments[0], pattern[0])) \
        and path_matches(pattern[1:], segments[1:])


def frozen_files(root: str | Path) -> dict[Path, tuple[Path, str]]:
    """``{file: (freeze manifest, sha256)}`` of every freeze manifest under ``root``."""
    out: dict[Path, tuple[Path, str]] = {}
    for lock in sorted(Path(root).rglob(FREEZE_GLOB)):
        try:
            files = json.loads(lock.read_text(encoding="utf-8")).get("files")
        except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            raise GabaritoError("not a freeze manifest: expected a JSON object with 'files'", path=lock) from None
        if not isinstance(files, dict):
            raise GabaritoError("not a freeze manifest: expected a JSON object with 'files'", path=lock)
        for rel, sha in files.items():
            out[Path(os.path.normpath(lock.parent / rel))] = (lock, str(sha))
    return out


def run_folders(root: str | Path) -> list[Path]:
    """Every run folder of ``gabarito evaluate`` under ``root`` (a folder holding :data:`RUN_RECORD`)."""
    return sorted({p.parent for p in Path(root).rglob(RUN_RECORD)})


def guarded_problems(root: str | Path, runs: list[Path] | None = None) -> Iterator[tuple[Path, str]]:
    """``(file, why)`` for each file :data:`GUARDED` names under ``root`` (run folders aside: their
    own manifests answer) that neither its folder's manifest nor a freeze manifest records, or that
    is no longer the frozen one."""
    root = Path(root)
    runs = run_folders(root) if runs is None else runs
    frozen = None
    for path in sorted(root.rglob("*")):
        if (not path.is_file() or path.name == MANIFEST or path.name.startswith(".") or path.suffix == ".pyc"
                or any(folder in path.parents for folder in runs) or is_legacy(path.parent)):
            continue
        if not any(path_matches(p, path.relative_to(root).parts) for p in GUARDED):
            continue
        if path.name in read_manifest(manifest_path(path)):
            continue  # its sha256 is checked with every manifest's files
        frozen = frozen_files(root) if frozen is None else frozen
        lock, sha = frozen.get(Path(os.path.normpath(path)), (None, None))
        if lock is None:
            yield path, f"unrecorded: neither {MANIFEST} nor a freeze manifest holds its sha256"
        elif sha256_file(path) != sha:
            yield path, f"modified after it was frozen in {lock.name}"


def tree_problems(root: str | Path) -> Iterator[tuple[Path, str]]:
    """``(file, why)`` for each file under ``root`` that a page reads or a command trusts and that is
    not the one its run wrote: the files every manifest records (a recorded file that is not there is
    read by no one), the run folders (:func:`folder_problems`) and the run logs (``*.jsonl``) beside
    them, which must be recorded, and the files :data:`GUARDED` names (:func:`guarded_problems`)."""
    root = Path(root)
    runs = run_folders(root)
    for manifest in sorted(root.rglob(MANIFEST)):
        if manifest.parent in runs:
            continue
        for name in sorted(read_manifest(manifest)):
            why = state(manifest.parent / name)
            if why not in (None, "missing"):
                yield manifest.parent / name, why
    for log in sorted({p for folder in runs for p in folder.parent.glob("*.jsonl")}):
        if log.name not in read_manifest(manifest_path(log)) and not is_legacy(log.parent):
            yield log, f"unrecorded: no run recorded it in {MANIFEST}"
    for folder in runs:
        yield from folder_problems(folder)
    yield from guarded_problems(root, runs)


def verify_tree(root: str | Path) -> None:
    """Refuse, in one line naming the first file, a folder whose files are not the ones their runs
    wrote (:func:`tree_problems`)."""
    for path, why in tree_problems(root):
        raise GabaritoError(f"{why}: rerun the study that writes it or restore it with git", path=path)
