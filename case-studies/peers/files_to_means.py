"""From a TREC run file and a qrels file to the means of five measures, by each tool's own route.

One function per tool, each doing all the work a user of that tool does -- read both files, build
the tool's objects, evaluate, average -- and importing its tool only when called, so that
``bench_measures`` times the same code in its process and, run as a script, in a fresh one
(the one-shot time: interpreter start, imports, reading, evaluation)::

    python case-studies/peers/files_to_means.py gabarito run.trec qrels.txt

prints ``{"means": {measure: mean}, "peak_rss_kib": ...}`` as one JSON line.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

#: The measures, as gabarito names them.
MEASURES = ["nDCG@10", "RR@10", "R@100", "AP@100", "P@10"]
#: The same measures as ranx names them.
RANX = {"nDCG@10": "ndcg@10", "RR@10": "mrr@10", "R@100": "recall@100", "AP@100": "map@100",
        "P@10": "precision@10"}


def gabarito(run_path: str, qrels_path: str) -> dict:
    """``Run.from_trec`` (a view over the file's columns) evaluated and averaged."""
    from gabarito.core.runs import Qrels, Run
    from gabarito.measure.metrics import evaluate, mean

    values = evaluate(Run.from_trec(run_path), Qrels.from_trec(qrels_path), MEASURES)
    return {m: mean(values[m]) for m in MEASURES}


def gabarito_columns(run_path: str, qrels_path: str) -> dict:
    """``ColumnarRun.from_trec`` evaluated and averaged."""
    from gabarito.core.columnar import ColumnarRun
    from gabarito.core.runs import Qrels
    from gabarito.measure.metrics import evaluate, mean

    values = evaluate(ColumnarRun.from_trec(run_path), Qrels.from_trec(qrels_path), MEASURES)
    return {m: mean(values[m]) for m in MEASURES}


def ranx(run_path: str, qrels_path: str) -> dict:
    """ranx's own readers and ``evaluate`` (means; no write-back of per-query scores)."""
    import ranx

    means = ranx.evaluate(ranx.Qrels.from_file(qrels_path, kind="trec"), ranx.Run.from_file(run_path, kind="trec"),
                          list(RANX.values()), save_results_in_run=False)
    return {m: float(means[RANX[m]]) for m in MEASURES}


def ir_measures_names() -> dict:
    """ir_measures' measure objects, by gabarito's names."""
    import ir_measures

    from gabarito.core.measures import Measure

    return {m: ir_measures.parse_measure(Measure(m).ir_measures_name) for m in MEASURES}


def ir_measures(run_path: str, qrels_path: str) -> dict:
    """ir_measures' own readers and ``calc_aggregate``."""
    import ir_measures as irm

    names = ir_measures_names()
    means = irm.calc_aggregate(list(names.values()), irm.read_trec_qrels(qrels_path), irm.read_trec_run(run_path))
    return {m: float(means[names[m]]) for m in MEASURES}


TOOLS = {"gabarito": gabarito, "gabarito_columns": gabarito_columns, "ranx": ranx, "ir_measures": ir_measures}


def peak_rss_kib() -> int:
    """This process's peak resident memory in KiB: ``VmHWM`` (reset when the process started its
    program, unlike ``ru_maxrss``, which a child forked from a large process inherits)."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
    except (OSError, StopIteration, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(argv: list[str]) -> int:
    tool, run_path, qrels_path = argv
    means = TOOLS[tool](run_path, qrels_path)
    print(json.dumps({"means": means, "peak_rss_kib": peak_rss_kib()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
