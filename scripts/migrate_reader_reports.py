"""One-off migration: the weakly supervised readers' results keep each first stage's scores as a
Report (``gabarito.report/1``), as the other studies do.

    python scripts/migrate_reader_reports.py [--check]

Until 2026-12-08 ``train_weak_rerankers.py``, ``train_weak_ablation.py`` and
``train_concept_reader.py`` stored, per first stage, ``n_queries``, ``means``, ``ci`` and
``tests_nDCG@10`` built beside the scorer (``score_runs(tested=[])`` then ``against_baseline``);
they now store :func:`gabarito.measure.readings.stage_report` (the same scorer with the family
``Against(stage)``, tested on nDCG@10) as ``report``. This rewrites the three committed files the
same way, without training or searching:

* every stored mean, interval and test row is carried into the Report block unchanged, and the
  Report read back (:meth:`Report.from_dict`) must give each of them again;
* where the file kept per-question nDCG@10 values, the numbers are also recomputed from them
  (:func:`gabarito.measure.score.report_from_values`, same seed and resamples): in
  ``rerankers_weak.json`` every reading of every first stage (nDCG@10 means, intervals and the
  whole Holm family of each stage); in ``reader_concepts.json`` the primary reading against its
  first stage (difference, interval, raw p, sign test, wins; its Holm p needs the other readings'
  values, which that file did not keep);
* the query list of a block is the sorted question ids of those per-question values; the ablation
  kept none, so its (MEDLINE) blocks take the MEDLINE fold's list from ``rerankers_weak.json`` when
  the counts agree (the same judged questions of the same collection), else the script stops.

Anything not reproduced to 1e-12 stops the script and writes nothing. Each fold of
``rerankers_weak.json`` also gains its ``collection`` (what pages named by taking the fold's key
apart). Files are written through :func:`gabarito.study.records.write_migrated` (stamped, sha256
recorded). ``--check`` only reports.
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
from gabarito.measure.readings import row_against  # noqa: E402
from gabarito.measure.report import Report  # noqa: E402
from gabarito.measure.score import report_from_values  # noqa: E402
from gabarito.study.integrity import verify  # noqa: E402
from gabarito.study.records import require_same, write_migrated  # noqa: E402

WEAK = ROOT / "case-studies" / "standard_collections" / "rerankers_weak.json"
ABLATION = ROOT / "case-studies" / "standard_collections" / "rerankers_weak_ablation.json"
CONCEPTS = ROOT / "case-studies" / "benchmark_rrf" / "reader_concepts.json"
MIGRATION = "first_stages_as_reports"
TESTED = "nDCG@10"
LEGACY = ("n_queries", "means", "ci", f"tests_{TESTED}")
#: Fields of a test row that one pair's values decide (its Holm p depends on the whole family).
PAIR_FIELDS = ("a", "b", "mean_a", "mean_b", "mean_diff", "ci_low", "ci_high", "dz", "p_randomization",
               "wins", "losses", "ties", "p_sign")


def as_report(block: dict, stage: str, queries: list[str], params: dict, where: str, path: Path) -> dict:
    """The stage's legacy block as a Report block, checked to give back every stored number."""
    if "report" in block:
        raise GabaritoError(f"{where} already holds a Report", path=path)
    if len(queries) != block["n_queries"]:
        raise GabaritoError(f"{where}: {len(queries)} questions for {block['n_queries']} scored", path=path)
    measures = list(next(iter(block["means"].values())))
    report = Report(metrics=block["means"], ci=block["ci"], tests=tuple({"measure": TESTED, **row}
                                                                        for row in block[f"tests_{TESTED}"]),
                    n=block["n_queries"], queries=tuple(queries), measures=tuple(measures),
                    seed=params["seed"], resamples=params["bootstrap_resamples"], family=Against(stage))
    again = Report.from_dict(report.to_dict(per_query=False))
    require_same(block["means"], {k: {m: again.mean(k, m) for m in measures} for k in block["means"]},
                 f"{where}/means", path)
    require_same(block["ci"], {k: {m: list(again.interval(k, m)) for m in measures} for k in block["ci"]},
                 f"{where}/ci", path)
    rows = block[f"tests_{TESTED}"]
    require_same(rows, [{k: v for k, v in row_against(again, r["a"], stage).items() if k != "measure"} for r in rows],
                 f"{where}/tests", path)
    rest = {k: v for k, v in block.items() if k not in LEGACY}
    return {**{k: v for k, v in rest.items() if k in ("method", "run_sha256")}, "report": again.to_dict(per_query=False),
            **{k: v for k, v in rest.items() if k not in ("method", "run_sha256")}}


def recomputed(values: dict, stage: str, params: dict) -> Report:
    """The Report of per-question nDCG@10 values ``{method: {qid: value}}`` against ``stage``."""
    return report_from_values({k: {TESTED: v} for k, v in values.items()}, [TESTED], resamples=params["bootstrap_resamples"],
                              seed=params["seed"], family=Against(stage))


def weak(data: dict) -> dict:
    params = data["provenance"]["parameters"]
    folds = {}
    for name, fold in data["folds"].items():
        stages = {}
        for stage, block in fold["first_stages"].items():
            values = fold["per_query_nDCG@10"][stage]
            new = as_report(block, stage, sorted(values[stage]), params, f"{name}/{stage}", WEAK)
            fresh = recomputed(values, stage, params).to_dict(per_query=False)
            mine = new["report"]
            require_same({k: {TESTED: v[TESTED]} for k, v in mine["metrics"].items()}, fresh["metrics"],
                         f"{name}/{stage}/recomputed means", WEAK)
            require_same({k: {TESTED: v[TESTED]} for k, v in mine["ci95"].items()}, fresh["ci95"],
                         f"{name}/{stage}/recomputed intervals", WEAK)
            require_same(mine["tests"], fresh["tests"], f"{name}/{stage}/recomputed tests", WEAK)
            stages[stage] = new
        named = [c for c in params["folds"] if f"{c}/{fold['recipe']}" == name]
        if len(named) != 1:
            raise GabaritoError(f"fold {name!r} is not one of the collections run, with its recipe", path=WEAK)
        collection = named[0]
        folds[name] = {"collection": collection, **fold, "first_stages": stages}
    return {**data, "folds": folds}


def ablation(data: dict, weak_data: dict) -> dict:
    params = data["provenance"]["parameters"]
    cells = {}
    for name, cell in data["cells"].items():
        fold = weak_data["folds"][f"{cell['collection']}/weak"]
        queries = sorted(fold["per_query_nDCG@10"]["bm25"]["bm25"])
        cells[name] = {**cell, "bm25": as_report(cell["bm25"], "bm25", queries, params, f"{name}/bm25", ABLATION)}
    return {**data, "cells": cells}


def concepts(data: dict) -> dict:
    params = data["provenance"]["parameters"]
    primary = f"{params['primary'][0]}@{params['primary'][1]}"
    sets = {}
    for key, regimes in data["sets"].items():
        sets[key] = {}
        for regime, r in regimes.items():
            stages = {}
            for stage, block in r["first_stages"].items():
                values = block[f"per_query_{TESTED}"]
                where = f"{key}/{regime}/{stage}"
                new = as_report(block, stage, sorted(values[stage]), params, where, CONCEPTS)
                fresh = recomputed({stage: values[stage], primary: values[primary]}, stage, params)
                row, stored = row_against(fresh, primary, stage), row_against(new["report"], primary, stage)
                require_same({k: stored[k] for k in PAIR_FIELDS}, {k: row[k] for k in PAIR_FIELDS},
                             f"{where}/recomputed {primary}", CONCEPTS)
                stages[stage] = new
            sets[key][regime] = {**r, "first_stages": stages}
    return {**data, "sets": sets}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="the readers' results: each first stage's scores as a Report")
    ap.add_argument("--check", action="store_true", help="only say whether every number is reproduced")
    args = ap.parse_args(argv)
    loaded = {}
    for path in (WEAK, ABLATION, CONCEPTS):
        verify(path)
        loaded[path] = json.loads(path.read_text(encoding="utf-8"))
    plans = [(WEAK, weak(loaded[WEAK])), (ABLATION, ablation(loaded[ABLATION], loaded[WEAK])),
             (CONCEPTS, concepts(loaded[CONCEPTS]))]
    if args.check:
        print("every stored number reproduced by the Reports; nothing written (--check)")
        return 0
    write_migrated(plans, MIGRATION)
    for path, _ in plans:
        print(f"{path.name}: each first stage now holds a Report; every number reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
