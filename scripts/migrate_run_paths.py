"""One-off migration: the input paths of committed ``gabarito evaluate`` runs made relative.

    python scripts/migrate_run_paths.py [--check]

Until 2026-12-07 a run record kept ``documents_path`` and ``evaluation_path`` as the command
received them, and the help center's judged runs (``case-studies/helpcenter/judging/runs/*``) had
received the checkout's absolute paths: their ``run.json`` named the build machine's folders.
``gabarito evaluate`` now writes them through :func:`gabarito.evaluation.runlog.recorded_path`;
this script rewrites the committed records the same way, relative to the checkout (the folder the
runs were made from, as their README says).

Only run folders whose files are as their run wrote them are touched
(:func:`gabarito.study.integrity.folder_problems`), and only the two path fields change: every
number stays identical. A path outside the checkout stops the script (it cannot be made
relative). Each changed ``run.json`` is written through
:func:`gabarito.study.records.write_measurement` (its new sha256 recorded in the folder's
manifest) and gains ``migrations: [{"what": "relative_input_paths", "date": ...}]``. A committed
run log holding an absolute input path also stops the script (its records must equal the run
folders', ``scripts/record_run_logs.py``). ``--check`` only reports.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gabarito.errors import GabaritoError, run_main
from gabarito.evaluation.runlog import PATH_FIELDS, read_log, recorded_path, warn_damaged
from gabarito.study.integrity import MANIFEST, RUN_RECORD, folder_problems, read_manifest
from gabarito.study.records import write_migrated

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ROOT / "case-studies"
MIGRATION = "relative_input_paths"


def run_folders(studies: Path) -> list[Path]:
    """Every run folder whose manifest records a ``run.json``."""
    return [m.parent for m in sorted(studies.rglob(MANIFEST)) if RUN_RECORD in read_manifest(m)]


def relative_fields(record: dict, root: Path, where: Path) -> dict[str, str]:
    """``{field: new value}`` for each absolute input path of ``record``, made relative to ``root``."""
    changed = {}
    for field in PATH_FIELDS:
        value = record.get(field)
        if value is None or not Path(value).is_absolute():
            continue
        new = recorded_path(value, base=root)
        if Path(new).is_absolute():
            raise GabaritoError(f"{field} {value!r} is outside the checkout {root}: it cannot be made "
                                "relative", path=where)
        changed[field] = new
    return changed


def check_logs(studies: Path, root: Path) -> None:
    """Refuse a committed run log with an absolute input path (its run folders are migrated here)."""
    for log in sorted(studies.rglob("log.jsonl")):
        def damaged(message: str, log=log) -> None:
            raise GabaritoError(message, path=log)
        for lineno, rec in read_log(log, warn_damaged(log, damaged)):
            if relative_fields(rec, root, log):
                raise GabaritoError(f"line {lineno} records an absolute input path: migrate the log with its "
                                    "run folders", path=log)


def planned(studies: Path, root: Path) -> list[tuple[Path, dict]]:
    """``(run.json, its record with relative input paths)`` for each run folder that needs it; each
    change printed."""
    plans = []
    for folder in run_folders(studies):
        for path, why in folder_problems(folder):  # only a folder as its run wrote it is migrated
            raise GabaritoError(why, path=path)
        record = json.loads((folder / RUN_RECORD).read_text(encoding="utf-8"))
        changed = relative_fields(record, root, folder / RUN_RECORD)
        for field, value in changed.items():
            print(f"{folder.relative_to(studies)}: {field} -> {value}")
        plans += [(folder / RUN_RECORD, {**record, **changed})] if changed else []
    return plans


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--studies", type=Path, default=STUDIES)
    ap.add_argument("--root", type=Path, default=ROOT, help="the folder the runs were made from")
    ap.add_argument("--check", action="store_true", help="report what would change, write nothing")
    args = ap.parse_args(argv)
    check_logs(args.studies, args.root)
    plans = planned(args.studies, args.root)
    if not args.check:
        write_migrated(plans, MIGRATION)
    return 0


if __name__ == "__main__":
    run_main(main)
