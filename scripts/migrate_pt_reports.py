"""One-off migration: the Portuguese reader's results (``case-studies/reranking/reader_pt.json``)
keep each first stage's scores as a Report (``gabarito.report/1``), as the other studies do.

    python scripts/migrate_pt_reports.py [--check]

Until 2026-12-07 ``train_pt_reader.py`` stored, per first stage, its own ``means``, ``ci``,
``tests`` (each reading against the stage, Holm per measure) and ``per_query``; the script now
stores ``score_runs(..., family=Against(stage)).to_dict()``. This rewrites the committed file the
same way, from its own per-query values (no training, no search:
:func:`gabarito.measure.score.report_from_values`, same seed, resamples and query order), and only
when the Report reproduces every stored number: each mean, each interval and every field of every
test row, and the ``at_20`` / ``at_10`` summaries the page reads (floats to 1e-12). Anything else
stops the script and writes nothing. The file is written through
:func:`gabarito.study.records.write_migrated` (stamped, its sha256 recorded). ``--check`` only reports.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gabarito.errors import GabaritoError, run_main  # noqa: E402
from gabarito.measure.families import Against  # noqa: E402
from gabarito.measure.score import report_from_values  # noqa: E402
from gabarito.study.integrity import verify  # noqa: E402
from gabarito.study.records import require_same, write_migrated  # noqa: E402

PATH = ROOT / "case-studies" / "reranking" / "reader_pt.json"
MIGRATION = "first_stages_as_reports"
LEGACY = ("means", "ci", "tests", "per_query")


def migrated(data: dict) -> dict:
    """The file with each first stage's block as ``{"report", "convex_weights"}``, checked."""
    from studies.reranking.train_pt_reader import MEASURES, at_n

    params = data["provenance"]["parameters"]
    stages = {}
    for stage, block in data["first_stages"].items():
        if "report" in block:
            raise GabaritoError(f"first stage {stage!r} already holds a Report", path=PATH)
        report = report_from_values(block["per_query"], MEASURES, resamples=params["bootstrap_resamples"],
                                    seed=params["seed"], family=Against(stage))
        require_same(block["means"], {k: {m: report.mean(k, m) for m in MEASURES} for k in block["means"]}, f"{stage}/means", PATH)
        require_same(block["ci"], {k: {m: list(report.interval(k, m)) for m in MEASURES} for k in block["ci"]}, f"{stage}/ci", PATH)
        rows = {m: [{k: v for k, v in r.items() if k != "measure"} for r in report.to_dict()["tests"] if r["measure"] == m]
                for m in MEASURES}
        require_same(block["tests"], rows, f"{stage}/tests", PATH)
        require_same(block["n_queries"], report.n, f"{stage}/n_queries", PATH)
        stages[stage] = {"report": report.to_dict(), "convex_weights": block["convex_weights"]}
    for n in (10, 20):
        require_same(data[f"at_{n}"], at_n(stages, n), f"at_{n}", PATH)
    return {**data, "first_stages": stages}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="reader_pt.json: each first stage's scores as a Report")
    ap.add_argument("--check", action="store_true", help="only say whether the migration would reproduce every number")
    args = ap.parse_args(argv)
    verify(PATH)
    data = json.loads(PATH.read_text(encoding="utf-8"))
    new = migrated(data)
    if args.check:
        print(f"{PATH.name}: every number reproduced by the Reports; nothing written (--check)")
        return 0
    write_migrated([(PATH, new)], MIGRATION)
    print(f"{PATH.name}: {len(new['first_stages'])} first stages now hold a Report; every number reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
