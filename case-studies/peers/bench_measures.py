"""Evaluation speed: gabarito's columnar evaluation core beside ir_measures (and ranx when it is
installed) on synthetic runs, in one process, with the agreement of their per-query values.

Two synthetic collections (seeded): a large one (10,000 queries x 1,000 retrieved documents, 1-5
relevant documents per query graded 1-3, some of them not retrieved) and a small one (100 x 100)
for the latency of a small study. Per collection and tool: the seconds of every repetition of one
evaluation of five measures (nDCG@10, RR@10, R@100, AP@100, P@10) on a run already in the tool's
input form, their median, and the ratio of the medians. gabarito is timed twice: on a ``Run`` (the
dict every study passes; each call reads its rows) and on a ``ColumnarRun`` built once (the warm
call, as ranx's is on its own ``Run``), with the time of that build; the seconds of ``score_runs`` (means, 95%
bootstrap intervals and paired randomization tests) on three runs; the peak memory one gabarito
evaluation allocates (tracemalloc) and the process's peak resident memory; the load averages before
and after. Agreement: the largest |difference| between gabarito's and ir_measures' per-query
values, per measure (scores are distinct, so the tools' tie rules do not matter).

    python case-studies/peers/bench_measures.py                             # (~10 min on 2 cores)
    python case-studies/peers/bench_measures.py --queries 500 --docs 200    # quick
"""

from __future__ import annotations

import gc
import importlib.metadata
import importlib.util
import resource
import statistics
import time
import tracemalloc
from pathlib import Path

import numpy as np

from gabarito.core.columnar import ColumnarRun
from gabarito.core.measures import Measure
from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError
from gabarito.measure import metrics
from gabarito.measure.score import score_runs
from gabarito.measure.timing import load_average
from gabarito.study.runner import say, variant_main

HERE = Path(__file__).resolve().parent

MEASURES = ["nDCG@10", "RR@10", "R@100", "AP@100", "P@10"]
#: The pool the synthetic doc ids are drawn from (a prime, so a stride walks it without repeats).
POOL = 1_000_003
SMALL = (100, 100)


def add_arguments(ap) -> None:
    ap.add_argument("--queries", type=int, default=10_000, help="queries of the large run")
    ap.add_argument("--docs", type=int, default=1_000, help="retrieved documents per query of the large run")
    ap.add_argument("--repetitions", type=int, default=3, help="timed evaluations per tool (large run)")
    ap.add_argument("--peer-repetitions", type=int, default=1, help="timed ir_measures evaluations (large run)")
    ap.add_argument("--small-repetitions", type=int, default=20, help="timed evaluations per tool (small run)")


def synthetic(n_queries: int, n_docs: int, seed: int) -> tuple[list[str], np.ndarray, np.ndarray, Qrels]:
    """Query ids, doc ids and scores (``n_queries x n_docs``, scores distinct) and graded qrels:
    1-5 relevant documents per query, grades 1-3, each retrieved with probability 0.7."""
    rng = np.random.default_rng(seed)
    start = rng.integers(0, POOL, n_queries)
    stride = rng.integers(1, POOL, n_queries)
    ids = (start[:, None] + np.arange(n_docs)[None, :] * stride[:, None]) % POOL
    docs = np.array([f"d{i}" for i in range(POOL)], dtype=object)[ids]
    scores = rng.random((n_queries, n_docs))
    n_rel = rng.integers(1, 6, n_queries)
    qids = [f"q{q:05d}" for q in range(n_queries)]
    qrels = {}
    for q, qid in enumerate(qids):
        picks = rng.choice(n_docs, size=n_rel[q], replace=False).tolist()
        retrieved = (rng.random(n_rel[q]) < 0.7).tolist()
        grades = rng.integers(1, 4, n_rel[q]).tolist()
        qrels[qid] = {(docs[q, p] if r else f"u{q}-{j}"): g for j, (p, r, g) in enumerate(zip(picks, retrieved, grades))}
    return qids, docs, scores, Qrels(qrels)


def as_run(qids: list[str], docs: np.ndarray, scores: np.ndarray) -> Run:
    """The :class:`Run` of score rows, each list best first (scores are distinct, so the tie
    rule has nothing to break)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    docs, scores = np.take_along_axis(docs, order, 1), np.take_along_axis(scores, order, 1)
    run = Run()
    for qid, row_docs, row_scores in zip(qids, docs.tolist(), scores.tolist()):
        dict.__setitem__(run, qid, list(zip(row_docs, row_scores)))
    return run


def timed(fn, repetitions: int) -> tuple[list[float], object]:
    """Seconds of each call of ``fn`` (after a collection of garbage), and the last result."""
    seconds, out = [], None
    for _ in range(repetitions):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        seconds.append(time.perf_counter() - t0)
    return seconds, out


def ir_measures_values(run_dicts: dict, qrels: Qrels) -> dict:
    import ir_measures

    parsed = [ir_measures.parse_measure(Measure(m).ir_measures_name) for m in MEASURES]
    by_name = {str(p): m for p, m in zip(parsed, MEASURES)}
    out = {m: {} for m in MEASURES}
    for metric in ir_measures.iter_calc(parsed, qrels, run_dicts):
        out[by_name[str(metric.measure)]][metric.query_id] = metric.value
    return out


def ranx_times(run: Run, qrels: Qrels, repetitions: int) -> dict:
    """ranx's first call (numba compiles) and warm calls, when ranx is installed."""
    if importlib.util.find_spec("ranx") is None:
        return {"installed": False}
    import ranx

    names = {"nDCG@10": "ndcg@10", "RR@10": "mrr@10", "R@100": "recall@100", "AP@100": "map@100",
             "P@10": "precision@10"}
    r_qrels = ranx.Qrels({q: dict(g) for q, g in qrels.items()})
    r_run = ranx.Run({q: dict(p) for q, p in run.items()})
    first, _ = timed(lambda: ranx.evaluate(r_qrels, r_run, list(names.values()), return_mean=False), 1)
    warm, _ = timed(lambda: ranx.evaluate(r_qrels, r_run, list(names.values()), return_mean=False), repetitions)
    return {"installed": True, "version": importlib.metadata.version("ranx"), "first_call_s": first[0], "seconds": warm,
            "median_s": statistics.median(warm)}


def agreement(ours: dict, theirs: dict) -> dict:
    """Per measure the largest |gabarito - ir_measures| over the queries both scored."""
    out = {}
    for m in MEASURES:
        common = [q for q in ours[m] if q in theirs[m]]
        out[m] = {"max_abs_diff": max((abs(ours[m][q] - theirs[m][q]) for q in common), default=None),
                  "queries_compared": len(common), "queries_only_gabarito": len(ours[m]) - len(common)}
    return out


def memory_of(fn) -> int:
    """Peak bytes allocated (Python and numpy) during one call of ``fn``."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def collection_stage(n_queries: int, n_docs: int, seed: int, reps: int, peer_reps: int, resamples: int) -> dict:
    qids, docs, scores, qrels = synthetic(n_queries, n_docs, seed)
    noise = np.random.default_rng(seed + 1).normal(0, 0.2, (2,) + scores.shape)
    others = {"a": as_run(qids, docs, scores), "b": as_run(qids, docs, scores + noise[0]),
              "c": as_run(qids, docs, scores + noise[1])}
    run = others["a"]
    ours_s, ours = timed(lambda: metrics.evaluate(run, qrels, MEASURES), reps)
    say(f"  {n_queries}x{n_docs}: gabarito evaluate {statistics.median(ours_s):.2f} s")
    build_s, columns = timed(lambda: ColumnarRun.from_run(run), 1)
    keys_s, _ = timed(lambda: columns.doc_keys, 1)
    cols_s, from_columns = timed(lambda: metrics.evaluate(columns, qrels, MEASURES), reps)
    say(f"  {n_queries}x{n_docs}: gabarito evaluate on columns {statistics.median(cols_s):.2f} s")
    t0 = time.perf_counter()
    run_dicts = {q: dict(p) for q, p in run.items()}
    dict_build_s = time.perf_counter() - t0
    peer_s, theirs = timed(lambda: ir_measures_values(run_dicts, qrels), peer_reps)
    say(f"  {n_queries}x{n_docs}: ir_measures {statistics.median(peer_s):.2f} s")
    del run_dicts
    stats_s, _ = timed(lambda: score_runs(others, qrels, MEASURES, seed=seed, resamples=resamples), 1)
    say(f"  {n_queries}x{n_docs}: score_runs on 3 runs {stats_s[0]:.2f} s")
    peak = memory_of(lambda: metrics.evaluate(run, qrels, MEASURES))
    tools = {"gabarito": {"seconds": ours_s, "median_s": statistics.median(ours_s), "min_s": min(ours_s)},
             "gabarito_columns": {"seconds": cols_s, "median_s": statistics.median(cols_s), "min_s": min(cols_s),
                                  "build_s": build_s[0], "doc_keys_s": keys_s[0],
                                  "values_identical_to_run": from_columns == ours},
             "ir_measures": {"seconds": peer_s, "median_s": statistics.median(peer_s), "min_s": min(peer_s),
                             "input_build_s": dict_build_s},
             "ranx": ranx_times(run, qrels, reps)}
    for peer in ("ir_measures", "gabarito_columns"):
        tools[peer]["ratio_to_gabarito_median"] = tools[peer]["median_s"] / tools["gabarito"]["median_s"]
    tools["ir_measures"]["ratio_to_gabarito_columns_median"] = \
        tools["ir_measures"]["median_s"] / tools["gabarito_columns"]["median_s"]
    if tools["ranx"].get("installed"):
        tools["ranx"]["ratio_to_gabarito_median"] = tools["ranx"]["median_s"] / tools["gabarito"]["median_s"]
        tools["ranx"]["ratio_to_gabarito_columns_median"] = \
            tools["ranx"]["median_s"] / tools["gabarito_columns"]["median_s"]
    return {"queries": n_queries, "docs_per_query": n_docs, "rows": n_queries * n_docs,
            "relevant": sum(len(g) for g in qrels.values()), "tools": tools,
            "score_runs": {"runs": len(others), "resamples": resamples, "seconds": stats_s},
            "gabarito_evaluate_peak_bytes": peak, "agreement_with_ir_measures": agreement(ours, theirs)}


def run(ctx) -> dict:
    a = ctx.args
    if a.queries < 10 or a.docs < 100 or min(a.repetitions, a.peer_repetitions, a.small_repetitions) < 1:
        raise GabaritoError("--queries >= 10, --docs >= 100 and every repetition count >= 1")
    load_start = load_average()
    collections = {}
    with ctx.phase("small"):
        collections["small"] = collection_stage(*SMALL, ctx.seed, a.small_repetitions, a.small_repetitions,
                                                ctx.resamples)
    with ctx.phase("large"):
        collections["large"] = collection_stage(a.queries, a.docs, ctx.seed + 7, a.repetitions, a.peer_repetitions,
                                                ctx.resamples)
    load_end = load_average()
    import ir_measures

    prov = ctx.provenance(corpus={"synthetic": True, "collections": {k: [v["queries"], v["docs_per_query"]]
                                                                     for k, v in collections.items()}},
                          model=None,
                          engine={"gabarito": {"name": "gabarito", "core": "gabarito.measure.columnar"},
                                  "ir_measures": {"name": "ir_measures", "version": ir_measures.__version__},
                                  "numpy": {"name": "numpy", "version": np.__version__}},
                          parameters={"measures": MEASURES, "repetitions": a.repetitions,
                                      "peer_repetitions": a.peer_repetitions,
                                      "small_repetitions": a.small_repetitions,
                                      "relevant_per_query": [1, 5], "grades": [1, 3], "retrieved_share": 0.7})
    prov["machine"].update(load_average_start=load_start, load_average_end=load_end,
                           peak_rss_kib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return {"provenance": prov, "collections": collections}


def main(argv=None) -> "NoReturn":  # noqa: F821
    variant_main(HERE, run, add_arguments, name="peers/measures", title="Evaluation speed: gabarito, ir_measures, ranx",
                 results="measures.json", doc=__doc__, argv=argv)


if __name__ == "__main__":
    main()
