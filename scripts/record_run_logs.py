"""One-off: record the committed run logs of ``gabarito evaluate`` in their folders' manifests.

    python scripts/record_run_logs.py [--check]

Until 2026-12-07 the help center's run log (``case-studies/helpcenter/runs/log.jsonl``) was in no
manifest: one number edited in it was published by ``gabarito site`` and ``gabarito report``.
``run_evaluations.py`` now records the log after its runs; this script records the committed one,
through :func:`gabarito.study.integrity.record` (the library's own recording function), after
checking that every record of the log is the ``run.json`` its run folder holds, and that every run
folder is the one its run wrote (:func:`gabarito.study.integrity.folder_problems`). No file but the
manifest changes. ``--check`` only reports.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gabarito.errors import GabaritoError, run_main
from gabarito.evaluation.runlog import read_log, warn_damaged
from gabarito.study.integrity import MANIFEST, RUN_RECORD, folder_problems, read_manifest, record
from gabarito.study.records import now_iso

ROOT = Path(__file__).resolve().parent.parent
LOGS = (ROOT / "case-studies" / "helpcenter" / "runs" / "log.jsonl",)


def check_log(log: Path) -> int:
    """Refuse a log whose records are not the run folders' ``run.json`` beside it; return how many."""
    import json

    def damaged(message: str) -> None:
        raise GabaritoError(message, path=log)

    n = 0
    for lineno, rec in read_log(log, warn_damaged(log, damaged)):
        folder = log.parent / str(rec.get("run_id"))
        if not (folder / RUN_RECORD).is_file():
            raise GabaritoError(f"line {lineno}: no run folder {folder.name}", path=log)
        for path, why in folder_problems(folder):
            raise GabaritoError(why, path=path)
        if json.loads((folder / RUN_RECORD).read_text(encoding="utf-8")) != rec:
            raise GabaritoError(f"line {lineno}: differs from {folder / RUN_RECORD}", path=log)
        n += 1
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only report")
    args = ap.parse_args(argv)
    for log in LOGS:
        n = check_log(log)
        done = log.name in read_manifest(log.parent / MANIFEST)
        if args.check or done:
            print(f"{log.relative_to(ROOT)}: {n} records, each its run folder's; "
                  f"{'recorded' if done else 'not recorded'}")
            continue
        digest = record(log, when=now_iso())
        print(f"{log.relative_to(ROOT)}: {n} records, each its run folder's; recorded sha256 {digest[:12]}…")
    return 0


if __name__ == "__main__":
    run_main(main)
