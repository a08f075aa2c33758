"""Results integrity: every results file's sha256, recorded by the run that wrote it.

A study folder keeps one manifest, ``results.sha256.json``::

    {"schema": 1, "files": {"results.json": {"sha256": "...", "recorded": "<date>"}, ...}}

:func:`record` is called by the writers of results files (:func:`gabarito.study.records.write_results`
and :func:`gabarito.study.records.write_measurement`) right after the atomic write, under a lock on
the manifest, so two writers in one folder never lose each other's entry. :func:`verify` is what the
site build, ``gabarito report`` and the pages call before reading a results file: a file changed
after its run (by hand, by a merge, by a half-finished copy) is refused in one line naming it, and so
is a results file no run recorded. ``gabarito studies`` shows such a file as modified.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Iterator

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_json, sha256_file

MANIFEST = "results.sha256.json"
SCHEMA = 1


def manifest_path(results_path: str | Path) -> Path:
    return Path(results_path).parent / MANIFEST


@contextlib.contextmanager
def _locked(manifest: Path) -> Iterator[None]:
    lock = manifest.with_name(f".{manifest.name}.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
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
    if raw.get("schema") != SCHEMA or not isinstance(files, dict) or not all(
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
