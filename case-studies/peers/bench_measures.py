"""Evaluation speed, like for like: gabarito, ranx and ir_measures from the same TREC files.

Two synthetic collections (seeded; scores distinct, so the tools' tie rules do not matter): a
large one (10,000 queries x 1,000 retrieved documents, 1-5 relevant documents per query graded
1-3, some of them not retrieved) and a small one (100 x 100). Each is written once as a TREC run
file (rank order, scores as Python writes them) and a qrels file; then, per collection:

* ``files``: end to end, from the two files to the means of five measures (nDCG@10, RR@10,
  R@100, AP@100, P@10), each tool by its own route (:mod:`studies.peers.files_to_means`: read,
  build, evaluate, average); gabarito by ``Run.from_trec`` and by ``ColumnarRun.from_trec``.
* ``prebuilt``: evaluation alone, on each tool's objects built once from the files beforehand
  (gabarito's ``Run`` -- a plain dict of lists -- and ``ColumnarRun``; ranx's ``Run``/``Qrels``,
  without writing the per-query scores back; ir_measures' dicts), the seconds of each build
  recorded beside them. A call that fills a cache or compiles (gabarito's columns hash their doc
  ids once; ranx's numba compiles) is made first and reported apart, as ``first_call_s``.
* both in ``rounds`` interleaved rounds (the tools' order rotating), the load average recorded
  before each round;
* ``oneshot``: a fresh process per tool and round (``files_to_means.py`` as a script): the wall
  seconds from start to the printed means, and its peak resident memory.

Agreement: per query and measure, the largest |difference| between gabarito's, ranx's and
ir_measures' values (each pair), and between every route's means and gabarito's.

    python case-studies/peers/bench_measures.py                                   # (~25 min on 2 cores)
    python case-studies/peers/bench_measures.py --queries 500 --docs 200 --out "$(mktemp -d)"  # quick
"""

from __future__ import annotations

import gc
import importlib.metadata
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from gabarito.core.columnar import ColumnarRun
from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError
from gabarito.measure import metrics
from gabarito.measure.timing import load_average
from gabarito.study.runner import say, variant_main
from studies.peers import files_to_means
from studies.peers.files_to_means import MEASURES, RANX

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

#: The pool the synthetic doc ids are drawn from (a prime, so a stride walks it without repeats).
POOL = 1_000_003
SMALL = (100, 100)
FILE_TOOLS = ("gabarito", "gabarito_columns", "ranx", "ir_measures")
ONESHOT_TOOLS = ("gabarito", "ranx", "ir_measures")


def add_arguments(ap) -> None:
    ap.add_argument("--queries", type=int, default=10_000, help="queries of the large run")
    ap.add_argument("--docs", type=int, default=1_000, help="retrieved documents per query of the large run")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (large run)")
    ap.add_argument("--small-rounds", type=int, default=20, help="interleaved rounds (small run)")
    ap.add_argument("--oneshot-rounds", type=int, default=3, help="fresh processes per tool (each run)")
    ap.add_argument("--peers", default="ranx,ir_measures",
                    help="the peers to time beside gabarito, comma-separated, from ranx and ir_measures")


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


def write_files(folder: Path, qids: list[str], docs: np.ndarray, scores: np.ndarray, qrels: Qrels) -> tuple[str, str]:
    """The run (each query's rows best first, scores as ``repr`` writes them: distinct and exact)
    and the qrels as TREC files in ``folder``."""
    order = np.argsort(-scores, axis=1, kind="stable")
    docs, scores = np.take_along_axis(docs, order, 1), np.take_along_axis(scores, order, 1)
    run_path, qrels_path = folder / "run.trec", folder / "qrels.txt"
    with open(run_path, "w", encoding="utf-8") as out:
        for qid, row_docs, row_scores in zip(qids, docs.tolist(), scores.tolist()):
            out.write("".join(f"{qid} Q0 {d} {r} {s!r} synthetic\n"
                              for r, (d, s) in enumerate(zip(row_docs, row_scores), start=1)))
    qrels.write_trec(qrels_path)
    return str(run_path), str(qrels_path)


def timed(fn) -> tuple[float, object]:
    """Seconds of one call of ``fn`` (after a collection of garbage), and its result."""
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def summary(seconds: list[float], **extra) -> dict:
    return {"seconds": seconds, "median_s": statistics.median(seconds), "min_s": min(seconds), **extra}


def chosen_peers(text: str) -> list[str]:
    """The peers of ``--peers``, each installed; anything else is one line."""
    peers = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in peers if p not in ("ranx", "ir_measures")]
    if unknown or not peers:
        raise GabaritoError(f"--peers from ranx and ir_measures, not {text!r}")
    missing = [p for p in peers if importlib.util.find_spec(p) is None]
    if missing:
        raise GabaritoError(f"--peers names {missing[0]}, which is not installed here (pip install {missing[0]})")
    return peers


def plain_run(run_path: str) -> Run:
    """The file's :class:`Run` as a plain dict of lists (a view becomes one when first read)."""
    run = Run.from_trec(run_path)
    len(run)
    return run


def _ir_dict(rows, field: str) -> dict:
    out: dict = {}
    for row in rows:
        out.setdefault(row.query_id, {})[row.doc_id] = getattr(row, field)
    return out


def prebuilt(run_path: str, qrels_path: str, tools: list[str]) -> tuple[dict, dict, dict, dict]:
    """``(calls, build_s, first_call_s, per_query)``: each tool's evaluation of its objects built
    beforehand, the seconds of each build, the calls made first and reported apart (gabarito's
    columns fill their caches, ranx's numba compiles), and each tool's per-query values."""
    build, qrels = {}, Qrels.from_trec(qrels_path)
    build["gabarito"], run = timed(lambda: plain_run(run_path))
    build["gabarito_columns"], columns = timed(lambda: ColumnarRun.from_trec(run_path))
    calls = {"gabarito": lambda: metrics.evaluate(run, qrels, MEASURES),
             "gabarito_columns": lambda: metrics.evaluate(columns, qrels, MEASURES)}
    first = {"gabarito_columns": timed(calls["gabarito_columns"])[0]}
    per_query = {"gabarito": calls["gabarito"]()}
    if "ranx" in tools:
        import ranx

        build["ranx"], (r_qrels, r_run) = timed(lambda: (ranx.Qrels.from_file(qrels_path, kind="trec"),
                                                          ranx.Run.from_file(run_path, kind="trec")))
        calls["ranx"] = lambda: ranx.evaluate(r_qrels, r_run, list(RANX.values()), save_results_in_run=False)
        first["ranx"] = timed(calls["ranx"])[0]
        ranx.evaluate(r_qrels, r_run, list(RANX.values()))  # untimed: the per-query values, written back
        per_query["ranx"] = {m: dict(r_run.scores[RANX[m]]) for m in MEASURES}
    if "ir_measures" in tools:
        calls["ir_measures"], build["ir_measures"], per_query["ir_measures"] = ir_measures_prebuilt(run_path, qrels_path)
    return calls, build, first, per_query


def ir_measures_prebuilt(run_path: str, qrels_path: str) -> tuple:
    """ir_measures' evaluation of its dicts built beforehand, the seconds of that build, and its
    per-query values."""
    import ir_measures

    names = files_to_means.ir_measures_names()
    build, (i_qrels, i_run) = timed(lambda: (_ir_dict(ir_measures.read_trec_qrels(qrels_path), "relevance"),
                                             _ir_dict(ir_measures.read_trec_run(run_path), "score")))
    by_name = {str(v): m for m, v in names.items()}
    per_query = {m: {} for m in MEASURES}
    for metric in ir_measures.iter_calc(list(names.values()), i_qrels, i_run):
        per_query[by_name[str(metric.measure)]][metric.query_id] = metric.value
    return lambda: ir_measures.calc_aggregate(list(names.values()), i_qrels, i_run), build, per_query


def interleaved(calls: dict, rounds: int) -> tuple[dict, list]:
    """Seconds of every call per key, in ``rounds`` rounds (the order rotating by one each
    round), and the load average before each round."""
    seconds, loads, keys = {key: [] for key in calls}, [], list(calls)
    for r in range(rounds):
        loads.append(load_average())
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            seconds[key].append(timed(calls[key])[0])
    return seconds, loads


def oneshot(tool: str, run_path: str, qrels_path: str) -> tuple[float, dict]:
    """Wall seconds of a fresh process taking the files to the means by ``tool``'s route, and
    what it printed (the means, its peak resident memory)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(REPO)) if p)}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, str(HERE / "files_to_means.py"), tool, run_path, qrels_path],
                          capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise GabaritoError(f"the one-shot process of {tool} failed: {last}")
    return seconds, json.loads(done.stdout.strip().splitlines()[-1])


def differences(ours: dict, theirs: dict) -> dict:
    """Per measure the largest |difference| of two tools' per-query values on the queries both
    scored, and how many queries that is."""
    out = {}
    for m in MEASURES:
        common = [q for q in ours[m] if q in theirs[m]]
        out[m] = {"max_abs_diff": max((abs(ours[m][q] - theirs[m][q]) for q in common), default=None),
                  "queries_compared": len(common), "queries_only_first": len(ours[m]) - len(common)}
    return out


def ratios(times: dict) -> dict:
    """Each gabarito route's median over each peer's (``<route>_over_<peer>``)."""
    routes = [t for t in times if t.startswith("gabarito")]
    return {f"{g}_over_{p}": times[g]["median_s"] / times[p]["median_s"]
            for g in routes for p in times if p not in routes}


def collection_stage(n_queries: int, n_docs: int, seed: int, rounds: int, oneshot_rounds: int, folder: Path,
                     peers: list[str]) -> dict:
    qids, docs, scores, qrels = synthetic(n_queries, n_docs, seed)
    run_path, qrels_path = write_files(folder, qids, docs, scores, qrels)
    del docs, scores
    tools = [t for t in FILE_TOOLS if t.startswith("gabarito") or t in peers]
    calls, build, first, per_query = prebuilt(run_path, qrels_path, tools)
    means = {}
    files = {tool: (lambda tool=tool: means.__setitem__(tool, files_to_means.TOOLS[tool](run_path, qrels_path)))
             for tool in tools}
    seconds, loads = interleaved({**{("files", t): f for t, f in files.items()},
                                  **{("prebuilt", t): c for t, c in calls.items()}}, rounds)
    del calls
    shots = {tool: {"seconds": [], "peak_rss_kib": []} for tool in ONESHOT_TOOLS if tool in tools}
    for r in range(oneshot_rounds):
        for tool in list(shots)[r % len(shots):] + list(shots)[:r % len(shots)]:
            s, printed = oneshot(tool, run_path, qrels_path)
            shots[tool]["seconds"].append(s)
            shots[tool]["peak_rss_kib"].append(printed["peak_rss_kib"])
            means[f"oneshot_{tool}"] = printed["means"]
    files_s = {t: summary(seconds[("files", t)]) for t in tools}
    prebuilt_s = {t: summary(seconds[("prebuilt", t)], build_s=build[t], first_call_s=first.get(t)) for t in tools}
    oneshot_s = {t: summary(v["seconds"], peak_rss_kib=v["peak_rss_kib"]) for t, v in shots.items()}
    say(f"  {n_queries}x{n_docs}: files " + ", ".join(f"{t} {v['median_s']:.2f} s" for t, v in files_s.items()))
    pairs = [("gabarito", "ir_measures"), ("ranx", "ir_measures"), ("ranx", "gabarito")]
    return {"queries": n_queries, "docs_per_query": n_docs, "rows": n_queries * n_docs,
            "relevant": sum(len(g) for g in qrels.values()), "rounds": rounds, "load_average_per_round": loads,
            "files": files_s, "prebuilt": prebuilt_s, "oneshot": oneshot_s,
            "ratios": {"files": ratios(files_s), "prebuilt": ratios(prebuilt_s), "oneshot": ratios(oneshot_s)},
            "agreement": {f"{a}_vs_{b}": differences(per_query[a], per_query[b]) for a, b in pairs
                          if a in per_query and b in per_query},
            "means_max_abs_diff_to_gabarito": {k: max(abs(v[m] - means["gabarito"][m]) for m in MEASURES)
                                               for k, v in means.items()}}


def run(ctx) -> dict:
    a = ctx.args
    if a.queries < 10 or a.docs < 100 or min(a.rounds, a.small_rounds, a.oneshot_rounds) < 1:
        raise GabaritoError("--queries >= 10, --docs >= 100 and every round count >= 1")
    peers = chosen_peers(a.peers)
    load_start = load_average()
    collections = {}
    with tempfile.TemporaryDirectory(prefix="bench_measures_") as tmp:
        for name, (q, d), seed, rounds in (("small", SMALL, ctx.seed, a.small_rounds),
                                           ("large", (a.queries, a.docs), ctx.seed + 7, a.rounds)):
            folder = Path(tmp) / name
            folder.mkdir()
            with ctx.phase(name):
                collections[name] = collection_stage(q, d, seed, rounds, a.oneshot_rounds, folder, peers)
    load_end = load_average()
    versions = {t: importlib.metadata.version(t) for t in ("ranx", "ir_measures", "numpy", "pyarrow", "numba")
                if importlib.util.find_spec(t) is not None}
    prov = ctx.provenance(corpus={"synthetic": True, "collections": {k: [v["queries"], v["docs_per_query"]]
                                                                     for k, v in collections.items()}},
                          model=None,
                          engine={"gabarito": {"name": "gabarito", "core": "gabarito.measure.columnar",
                                               "reader": "gabarito.core.trec_columns"},
                                  **{t: {"name": t, "version": v} for t, v in versions.items()}},
                          parameters={"measures": MEASURES, "ranx_names": RANX, "peers": peers, "rounds": a.rounds,
                                      "small_rounds": a.small_rounds, "oneshot_rounds": a.oneshot_rounds,
                                      "relevant_per_query": [1, 5], "grades": [1, 3], "retrieved_share": 0.7})
    prov["machine"].update(load_average_start=load_start, load_average_end=load_end,
                           peak_rss_kib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return {"provenance": prov, "collections": collections}


def main(argv=None) -> "NoReturn":  # noqa: F821
    variant_main(HERE, run, add_arguments, name="peers/measures", title="Evaluation speed: gabarito, ir_measures, ranx",
                 results="measures.json", doc=__doc__, argv=argv)


if __name__ == "__main__":
    main()
