"""What the build refuses before it runs a page: changed gold, results of other gold, dirty results.

0. Every results file must be byte for byte the one its run wrote: its sha256 equals the one
   recorded at write time in the folder's ``results.sha256.json`` (:mod:`gabarito.study.integrity`).
   So must every other file a page reads: the files a study's ``writes`` declares (samples, pools,
   keys: against their run's manifest or their freeze manifest), every file a manifest under
   ``case-studies/`` records, every run folder and the run logs beside them
   (:meth:`gabarito.study.spec.StudySpec.verify_files`, :func:`gabarito.study.integrity.verify_tree`).
1. Every ``case-studies/*/gold.lock.json`` must still match its gold files
   (:func:`gabarito.inputs.gold.verify_frozen`), and every results file must record, in
   ``provenance.gold_sha256``, the sha256 of the gold files as they are now
   (:func:`gabarito.study.records.check_results_gold`).
2. A results file computed on a working tree with uncommitted changes (``git.dirty``) cannot be
   traced to a commit: it is refused unless the build is told to publish it (``allow_dirty``,
   or ``GABARITO_ALLOW_DIRTY=1``), and then its page says so in its provenance box.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.inputs.gold import verify_frozen
from gabarito.study.integrity import verify as verify_results
from gabarito.study.integrity import verify_tree
from gabarito.study.records import check_results_gold

#: The environment variable that allows results computed on a dirty tree.
ALLOW_DIRTY_ENV = "GABARITO_ALLOW_DIRTY"


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GabaritoError(f"not valid JSON: {exc}", path=path) from None


def results_files(root: Path) -> list[tuple[Path, dict]]:
    """``(path, data)`` of every results file of every study: ``results.json``, and any other JSON
    beside it that carries a provenance (``provenance`` or top-level ``git`` and ``date``)."""
    out = []
    for study in sorted(p for p in (Path(root) / "case-studies").glob("*") if p.is_dir()):
        for path in sorted(study.glob("*.json")):
            if path.name in ("gold.lock.json", "study.json"):
                continue
            data = _read_json(path)
            if not isinstance(data, dict):
                continue
            if path.name == "results.json" or "provenance" in data or {"git", "date"} <= set(data):
                out.append((path, data))
    return out


def check_gold(root: Path) -> int:
    """Refuse gold that changed after freezing, and results computed against other gold; return
    the number of file hashes checked."""
    from gabarito.study.spec import all_studies

    studies = Path(root) / "case-studies"
    checked = 0
    if studies.is_dir():
        for spec in all_studies(studies).values():
            spec.verify_files()  # samples, pools, run logs and run folders: as their runs wrote them
        verify_tree(studies)  # and those of folders no study.json declares
    for manifest in sorted(studies.glob("*/gold.lock.json")):
        checked += len(verify_frozen(manifest))
    for path, data in results_files(root):
        verify_results(path)  # the file its run wrote, not one edited since
        provenance = data.get("provenance")
        gold = provenance.get("gold_sha256") if isinstance(provenance, dict) else None
        if gold is None and path.name != "results.json":
            continue  # a measurement with no gold (timings, scaling)
        if not isinstance(gold, dict) or not gold:
            raise GabaritoError("has no provenance.gold_sha256, so nothing shows which gold it was computed "
                                "against: rerun the study", path=path)
        for rel in gold:
            if not (path.parent / rel).is_file():
                raise GabaritoError(f"results were computed against gold file {rel}, which is missing: "
                                    "rerun the study", path=path)
        check_results_gold(path)
        checked += len(gold)
    return checked


def allow_dirty_default() -> bool:
    return os.environ.get(ALLOW_DIRTY_ENV, "").strip().lower() in ("1", "true", "yes")


def dirty_results(root: Path) -> list[Path]:
    """Results files whose provenance says they were computed on a tree with uncommitted changes."""
    out = []
    for path, data in results_files(root):
        prov = data.get("provenance") if isinstance(data.get("provenance"), dict) else data
        if (prov.get("git") or {}).get("dirty"):
            out.append(path)
    return out


def check_clean(root: Path, *, allow_dirty: bool) -> list[Path]:
    """Refuse results computed on a dirty tree unless ``allow_dirty``; return the dirty ones."""
    dirty = dirty_results(root)
    if dirty and not allow_dirty:
        names = ", ".join(p.relative_to(root).as_posix() for p in dirty[:4]) + (" ..." if len(dirty) > 4 else "")
        raise GabaritoError(
            f"{len(dirty)} results file(s) were computed on a working tree with uncommitted changes ({names}): "
            f"rerun the studies on a clean tree, or publish them anyway with --allow-dirty "
            f"({ALLOW_DIRTY_ENV}=1); their pages then say so")
    return dirty
