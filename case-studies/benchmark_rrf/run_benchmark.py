"""Steps 3-5: run word, meaning and fused search in ArcadeDB against the frozen gold; write results.

Refuses to run when the gold files differ from the freeze manifest. Writes,
atomically, ``results.json`` (metrics, intervals, tests, per-question ranks,
latency, ANN check, provenance) and TREC run files under ``runs/``.

    python case-studies/benchmark_rrf/run_benchmark.py                 # embedded ArcadeDB
    python case-studies/benchmark_rrf/run_benchmark.py --arcadedb-url http://host:2480
"""

from __future__ import annotations

import argparse
import inspect
import os
import shutil
import time
from pathlib import Path

from gabarito.retrieval import fusion
from gabarito.study import assemble as study
from gabarito.measure import timing
from gabarito.inputs.corpus import SEARCH_FIELDS, load_synesis
from gabarito.inputs.datasets import dataset_file
from gabarito.retrieval.arcadedb import ArcadeIndex, connect
from gabarito.retrieval.memory import ExactVectors, without_stop_words
from gabarito.errors import run_main
from gabarito.inputs.gold import load_gold, verify_frozen
from gabarito.hashing import sha256_file
from gabarito.retrieval.models import EmbeddingCache, Encoder, cache_dir
from gabarito.study.records import append_jsonl, provenance, write_results, write_trec_qrels, write_trec_run

HERE = Path(__file__).resolve().parent
GOLD_SETS = {"main": "questions.json", "extended": "questions_extended.json"}
MODEL = "sentence-transformers/all-mpnet-base-v2"
DATABASE = "social_acceptance"


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", help="local dataset mirror (or $GABARITO_DATA_MIRROR)")
    ap.add_argument("--arcadedb-url", default=os.environ.get("GABARITO_ARCADEDB_URL"),
                    help="use this ArcadeDB server instead of starting the embedded one "
                         "(credentials from $GABARITO_ARCADEDB_USER / $GABARITO_ARCADEDB_PASSWORD)")
    ap.add_argument("--db-dir", type=Path, default=cache_dir() / "arcadedb",
                    help="root folder of the embedded server")
    ap.add_argument("--model", default=MODEL)
    ap.add_argument("--k", type=int, default=10, help="cut-off of the reported lists")
    ap.add_argument("--deep-k", type=int, default=100, help="depth retrieved for deep fusion")
    ap.add_argument("--rrf-k", type=int, default=60)
    ap.add_argument("--latency-reps", type=int, default=2,
                    help="timed passes over the main questions (each pass times every question)")
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--cold", action="store_true",
                    help="start from nothing: drop the database and the cached vectors first")
    ap.add_argument("--out", type=Path, default=HERE)
    return ap.parse_args(argv)


def load_or_build_index(index: ArcadeIndex, concepts, vectors, *, model_id, dim, corpus_sha):
    """Reuse the stored index when it holds this corpus embedded by this model; else rebuild."""
    if index.exists():
        info = index.info()
        if (info.get("model_id") == model_id and int(info.get("dim", 0)) == dim
                and info.get("corpus_sha256") == corpus_sha and index.count() == len(concepts)):
            return "reused"
        index.drop()
    index.create(list(SEARCH_FIELDS), dim, model_id, extra={"corpus_sha256": corpus_sha})
    docs = [{"doc_id": c.name, **c.search_fields()} for c in concepts]
    index.ingest(docs, vectors, batch_size=200, progress=True)
    return "built"


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    phases: dict[str, float] = {}

    def phase(name, t0):
        phases[name] = round(time.perf_counter() - t0, 3)

    # Gold first: nothing runs against questions that changed after they were frozen.
    gold_sha = verify_frozen(HERE / "gold.lock.json")

    t0 = time.perf_counter()
    corpus_path = dataset_file("social_acceptance", "social_acceptance.syno", mirror=args.mirror)
    concepts = load_synesis(corpus_path)
    corpus_sha = sha256_file(corpus_path)
    names = [c.name for c in concepts]
    sets = {key: load_gold(HERE / f, names) for key, f in GOLD_SETS.items()}
    all_pairs = [p for pairs in sets.values() for p in pairs]
    phase("load", t0)

    if args.cold:
        shutil.rmtree(cache_dir() / "embeddings", ignore_errors=True)

    t0 = time.perf_counter()
    encoder = Encoder(args.model)
    phase("model_load", t0)
    t0 = time.perf_counter()
    cache = EmbeddingCache()
    doc_vectors = cache.encode(encoder, [c.text() for c in concepts], progress=True)
    cache_report = {"hits": cache.hits, "misses": cache.misses}
    phase("encode_corpus", t0)
    model_prov = encoder.provenance()

    with connect(args.arcadedb_url, root_dir=args.db_dir, database=DATABASE) as conn:
        if args.cold and conn.client.database_exists():
            conn.client.drop_database()
        if not conn.client.database_exists():
            conn.client.create_database()
        index = ArcadeIndex(conn.client, "Concept")
        t0 = time.perf_counter()
        index_state = load_or_build_index(index, concepts, doc_vectors, model_id=encoder.model_id,
                                          dim=encoder.dim, corpus_sha=corpus_sha)
        phase("index", t0)
        t0 = time.perf_counter()
        index.check_model(encoder.model_id, encoder.dim)
        graph_build_s = index.warm_up(doc_vectors[0])
        phase("warm_up", t0)

        # The searches: every question, both engines, deep enough for deep fusion.
        t0 = time.perf_counter()
        qvec = {p.id: encoder.encode_query(p.question) for p in all_pairs}
        bm25_run = {p.id: index.bm25(p.question, args.deep_k) for p in all_pairs}
        vec_run = {p.id: index.knn(qvec[p.id], args.deep_k, model_id=encoder.model_id) for p in all_pairs}
        phase("searches", t0)
        exact = ExactVectors(names, doc_vectors, model_id=encoder.model_id)
        exact_run = {q: exact.knn(v, args.k) for q, v in qvec.items()}

        runs = {
            "bm25": bm25_run,
            "vector": vec_run,
            f"rrf@{args.k}": study.fuse_runs([bm25_run, vec_run], k=args.rrf_k, depth=args.k),
            f"rrf@{args.deep_k}": study.fuse_runs([bm25_run, vec_run], k=args.rrf_k, depth=args.deep_k),
        }

        # Latency, on the main questions, after warm-up, measured here (not by a test).
        t0 = time.perf_counter()
        latency = measure_latency(index, encoder, [p.question for p in sets["main"]], args)
        phase("latency", t0)
        engine = {"name": "ArcadeDB", "version": conn.client.server_version(),
                  "mode": "external" if conn.server is None else "embedded (arcadedb-embedded, HTTP server)",
                  "index_state": index_state, "vector_graph_build_s": round(graph_build_s, 3)}
        queries = index.queries()

    results_sets = {}
    for key, pairs in sets.items():
        qrels = study.qrels_from_pairs(pairs)
        sub = {m: {p.id: run[p.id] for p in pairs} for m, run in runs.items()}
        cut = {m: {q: r[: args.k] for q, r in run.items()} for m, run in sub.items()}
        scored = study.score_runs(cut, qrels, n_resamples=args.resamples)
        rows = study.per_question(pairs, sub, cutoff=args.k)
        results_sets[key] = {
            "gold_file": GOLD_SETS[key],
            "n": scored["n"],
            "metrics": scored["metrics"],
            "ci95": scored["ci"],
            "tests": scored["tests"],
            "overlap_top1": study.top1_overlap(rows, "bm25", "vector"),
            "lost_by_fusion": {m: study.lost_by_fusion(rows, m, ["bm25", "vector"])
                               for m in runs if m.startswith("rrf@")},
            "ann": study.ann_recall({q: vec_run[q] for q in qrels}, {q: exact_run[q] for q in qrels},
                                    k=args.k),
            "per_question": rows,
        }
        write_trec_qrels(args.out / "runs" / f"qrels.{key}.txt", qrels)
    for method, run in runs.items():
        write_trec_run(args.out / "runs" / f"{method.replace('@', '_at_')}.trec", run,
                       tag=f"gabarito-{method}")

    wall = round(time.perf_counter() - started, 2)
    warm = cache_report["misses"] == 0 and index_state == "reused"
    wall_log = args.out / "runs" / "wall_times.jsonl"
    append_jsonl(wall_log, {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "wall_s": wall,
                            "state": "warm" if warm else "cold", "phases_s": phases})
    results = {
        "study": "benchmark_rrf",
        "title": "Word vs meaning vs fusion on the Social_Acceptance ontology",
        "provenance": provenance(
            corpus={"name": "social_acceptance", "file": corpus_path.name, "sha256": corpus_sha,
                    "n_docs": len(concepts)},
            gold_sha256=gold_sha,
            model=model_prov,
            engine=engine,
            parameters={"k": args.k, "deep_k": args.deep_k, "rrf_k": args.rrf_k,
                        "fusion_depths": [args.k, args.deep_k], "latency_reps": args.latency_reps,
                        "bootstrap_resamples": args.resamples, "text_fields": list(SEARCH_FIELDS),
                        "vector_text": "name with spaces + ': ' + description",
                        "ties": "score descending, then doc id ascending"},
        ),
        "queries": {**queries, "rrf_python": inspect.getsource(fusion.rrf)},
        "methods": list(runs),
        "sets": results_sets,
        "latency_ms": latency,
        "timings": {"wall_s": wall, "state": "warm" if warm else "cold", "phases_s": phases,
                    "embedding_cache": cache_report, "history": last_by_state(wall_log)},
    }
    write_results(args.out / "results.json", results)
    print(f"results.json written ({wall} s, {'warm' if warm else 'cold'}); "
          f"main R@10: " + ", ".join(f"{m} {v['R@10']:.3f}" for m, v in results_sets["main"]["metrics"].items()))
    return 0


def measure_latency(index, encoder, questions, args) -> dict:
    """Median/p95 of every stage, plus the HTTP floor and each stage's ratio to it."""
    vectors = [encoder.encode_query(q) for q in questions]
    mid = encoder.model_id
    k = args.k

    def hybrid(q):
        v = encoder.encode_query(q)
        fusion.rrf([[d for d, _ in index.bm25(q, k)], [d for d, _ in index.knn(v, k, model_id=mid)]],
                   k=args.rrf_k, depth=k)

    stages = {
        "http_floor": (lambda _: index.floor(), questions),
        "bm25": (lambda q: index.bm25(q, k), questions),
        # diagnostic: the same question without English stop words (the index's analyzer keeps
        # them, so "the", "of" ... match nearly every document and all of those get scored)
        "bm25_no_stop": (lambda q: index.bm25(without_stop_words(q), k), questions),
        "encode": (encoder.encode_query, questions),
        "knn": (lambda v: index.knn(v, k, model_id=mid), vectors),
        "vector_full": (lambda q: index.knn(encoder.encode_query(q), k, model_id=mid), questions),
        "hybrid_full": (hybrid, questions),
    }
    out = {}
    for name, (fn, inputs) in stages.items():
        out[name] = timing.summarize(timing.time_calls(fn, inputs, repeat=args.latency_reps, warmup=5))
    floor = out["http_floor"]["median"]
    out["ratio_to_floor"] = {s: out[s]["median"] / floor for s in ("bm25", "bm25_no_stop", "knn")}
    return out


def last_by_state(log_path: Path) -> dict:
    """The latest cold and warm wall times recorded in the wall-time log."""
    import json

    latest = {}
    for line in log_path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        latest[rec["state"]] = {"wall_s": rec["wall_s"], "date": rec["date"]}
    return latest


if __name__ == "__main__":
    run_main(main)
