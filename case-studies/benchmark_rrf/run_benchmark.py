"""Steps 3-5: word, meaning and fused search in ArcadeDB against the frozen gold; write results.

    python case-studies/benchmark_rrf/run_benchmark.py      # or: gabarito study benchmark_rrf
    python case-studies/benchmark_rrf/run_benchmark.py --arcadedb-url http://host:2480

Four methods -- BM25 (ArcadeDB full text), vector (ArcadeDB LSM_VECTOR) and their RRF read to
the cutoff (rrf@10) and to the depth (rrf@100) -- scored on every gold set of GOLD_SETS. The
runner (gabarito.study.runner) checks the frozen gold first, owns the shared arguments, times
the phases and writes results.json atomically; TREC runs, qrels and a wall-time log go to runs/.
"""

from __future__ import annotations

import inspect
import json
import shutil
import time
from pathlib import Path

from gabarito.core.methods import Method, fused, leaf
from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.inputs.corpus import SEARCH_FIELDS, load_synesis
from gabarito.inputs.datasets import dataset_file
from gabarito.inputs.gold import load_gold
from gabarito.measure import timing
from gabarito.measure.leakage import indexed_text, leakage_summary
from gabarito.measure.reproduction import reproduction
from gabarito.measure.per_question import lost_by_fusion, per_question, top1_overlap
from gabarito.core.runs import Qrels
from gabarito.measure.scaling import run_recall_at_k
from gabarito.measure.score import score_runs
from gabarito.notes import note
from gabarito.retrieval import fusion
from gabarito.retrieval.arcadedb import ArcadeIndex
from gabarito.retrieval.memory import ExactVectors, without_stop_words
from gabarito.retrieval.models import EmbeddingCache, Encoder, cache_dir
from gabarito.retrieval.pipeline import RRF, Pipeline
from gabarito.retrieval.protocol import Queries, TextRetriever, VectorRetriever
from gabarito.retrieval.reuse import index_record, open_or_build
from gabarito.study.records import append_jsonl
from gabarito.study.runner import record_written, say, study_main

#: The gold sets judged, in report order: key -> gold file beside this script. Each must be
#: frozen in a manifest listed in study.json; add a set here and it is searched and scored.
GOLD_SETS = {"main": "questions.json", "extended": "questions_extended.json",
             "published": "questions_published.json", "name_only": "protocols/questions_name_only.json",
             "disjoint": "protocols/questions_disjoint.json"}
#: The set whose gold file carries a published run to reproduce, and our method for each published one.
PUBLISHED_SET = "published"

LATENCY_SET = "main"  # the set whose questions are timed
MODEL = "sentence-transformers/all-mpnet-base-v2"
DATABASE, TYPE_NAME = "social_acceptance", "Concept"
MEASURES = ("R@1", "R@3", "R@5", "R@10", "RR@10", "nDCG@5", "nDCG@10")
FIRST_STAGES = ("bm25", "vector")


def published_methods(cutoff: int) -> dict[str, Method]:
    """Our method for each method of the published run: the two singles, and RRF of their top ``cutoff``."""
    return {"bm25": leaf("bm25"), "vector": leaf("vector"), "rrf": fused(cutoff, FIRST_STAGES)}


VECTOR_TEXT = "name with spaces + ': ' + description"
TIES = note("ranking.ties_by_doc_id")  # score descending, then doc id ascending


def add_arguments(ap) -> None:
    ap.add_argument("--model", default=MODEL, help="bi-encoder of the vector search")
    ap.add_argument("--cutoff", "--k", dest="cutoff", type=int, default=10,
                    help="cut-off of the scored lists (and depth of the shallow fusion)")
    ap.add_argument("--depth", "--deep-k", dest="depth", type=int, default=100,
                    help="depth each first stage retrieves (and the deep fusion reads)")
    ap.add_argument("--rrf-k", type=int, default=60, help="the RRF constant")
    ap.add_argument("--latency-reps", type=int, default=2,
                    help="timed passes over the main questions (each pass times every question)")


def check_arguments(args) -> None:
    if args.cutoff < 1 or args.depth <= args.cutoff:
        raise GabaritoError(f"need 1 <= --cutoff < --depth, got {args.cutoff} and {args.depth}")
    if args.rrf_k < 0 or args.latency_reps < 1:
        raise GabaritoError(f"need --rrf-k >= 0 and --latency-reps >= 1, got {args.rrf_k} and {args.latency_reps}")


def load_inputs(ctx):
    """The corpus (concepts + its record for the provenance) and every gold set, checked."""
    path = dataset_file(ctx.spec.corpus["dataset"], ctx.spec.corpus["file"], mirror=ctx.mirror())
    concepts = load_synesis(path)
    names = [c.name for c in concepts]
    sets = {key: load_gold(ctx.spec.dir / f, names) for key, f in GOLD_SETS.items()}
    corpus = {"name": ctx.spec.corpus["dataset"], "file": path.name, "sha256": sha256_file(path),
              "n_docs": len(concepts)}
    return concepts, corpus, sets


def embed_corpus(ctx, concepts):
    """The encoder and the corpus vectors (from the embedding cache when they are there)."""
    if ctx.args.cold:
        shutil.rmtree(cache_dir() / "embeddings", ignore_errors=True)
    with ctx.phase("model_load"):
        encoder = Encoder(ctx.args.model, device=ctx.device)  # its provenance records the device
    with ctx.phase("encode_corpus"):
        cache = EmbeddingCache()
        vectors = cache.encode(encoder, [c.text() for c in concepts], progress=True)
    return encoder, vectors, {"hits": cache.hits, "misses": cache.misses}


def open_index(ctx, conn, concepts, corpus, encoder, vectors):
    """The ArcadeDB index of the corpus (reused when it holds exactly this) and its engine record."""
    if ctx.args.cold:
        conn.client.drop_database()
        conn.client.create_database()
    index = ArcadeIndex(conn.client, TYPE_NAME)
    parts = {"corpus_sha256": corpus["sha256"], "model_id": encoder.model_id,
             "weights_sha256": encoder.weights_sha256, "dim": encoder.dim, "type_name": TYPE_NAME,
             "fields": list(SEARCH_FIELDS), "analyzer": None, "vector_text": VECTOR_TEXT}
    rows = [{"doc_id": c.name, **c.search_fields()} for c in concepts]
    with ctx.phase("index"):
        state = open_or_build(index, parts, fields=SEARCH_FIELDS, rows=rows, vectors=vectors,
                              model_id=encoder.model_id, progress=True)
    with ctx.phase("warm_up"):
        index.check_model(encoder.model_id, encoder.dim)
        graph_build_s = index.warm_up(vectors[0])
    engine = {"name": "ArcadeDB", "version": conn.client.server_version(),
              "mode": note("engine.arcadedb_external") if conn.server is None else note("engine.arcadedb_embedded"),
              "index_state": state, **index_record(parts, vectors), "vector_graph_build_s": round(graph_build_s, 3)}
    return index, engine


def search_runs(ctx, index, encoder, queries: Queries) -> dict:
    """The four methods' runs: both first stages to the depth, and their RRF read to the
    cutoff and to the depth (the same first-stage lists, fused by the pipeline's fusion)."""
    a = ctx.args
    bm25 = TextRetriever("bm25", index.bm25, info={"engine": "ArcadeDB", "index": "FULL_TEXT"})
    vector = VectorRetriever("vector", lambda v, d: index.knn(v, d, model_id=encoder.model_id), encoder,
                             info={"engine": "ArcadeDB", "index": "LSM_VECTOR"})
    deep = Pipeline(fused(a.depth, FIRST_STAGES), [bm25, vector], fusion=RRF(rrf_k=a.rrf_k))
    with ctx.phase("searches"):
        stages = deep.stages(queries, a.depth)
    first = [stages[name] for name in FIRST_STAGES]
    return {**{name: stages[name] for name in FIRST_STAGES},
            fused(a.cutoff, FIRST_STAGES): deep.fusion(first, a.cutoff),
            fused(a.depth, FIRST_STAGES): stages["fused"]}


def score_set(ctx, key: str, pairs, runs: dict, exact_run, texts) -> dict:
    """One gold set: means, intervals and paired tests at the cutoff, per-question ranks,
    top-1 overlap, questions lost by fusion, the ANN index's recall against exact search, and
    leakage (question words found in the expected and in BM25's best wrong concept's text)."""
    cutoff = ctx.args.cutoff
    qrels = Qrels.single({p.id: p.gold for p in pairs})
    scored = score_runs({m: r.cut(cutoff) for m, r in runs.items()}, qrels, MEASURES,
                        seed=ctx.seed, resamples=ctx.resamples)
    rows = per_question(pairs, runs, cutoff=cutoff)
    ctx.write_qrels(key, qrels)
    return {
        "gold_file": GOLD_SETS[key],
        **scored.to_dict(per_query=False),
        "overlap_top1": top1_overlap(rows, *FIRST_STAGES),
        "lost_by_fusion": {m: lost_by_fusion(rows, m, list(FIRST_STAGES)) for m in runs if m.startswith("rrf@")},
        "ann": run_recall_at_k(runs["vector"], {q: exact_run[q] for q in qrels}, k=cutoff),
        "leakage": leakage_summary(rows, list(runs), texts, wrong_from="bm25"),
        "per_question": rows,
    }


def reproduce(ctx, result_set: dict) -> dict:
    """The published set beside the published run of its gold file: ranks and metrics."""
    doc = json.loads((ctx.spec.dir / GOLD_SETS[PUBLISHED_SET]).read_text(encoding="utf-8"))
    methods = published_methods(ctx.args.cutoff)
    ranks = {p["id"]: p["published_rank"] for p in doc["pairs"]}
    out = reproduction(ranks, doc["published"]["metrics"], result_set["per_question"], result_set["metrics"],
                       result_set["ci95"], methods, cutoff=ctx.args.cutoff)
    return {"source": doc["source"], **out}


def measure_latency(index, encoder, questions, args) -> dict:
    """Median/p95 of every stage, after warm-up, plus the HTTP floor and each stage's ratio to it."""
    vectors = [encoder.encode_query(q) for q in questions]
    mid, k = encoder.model_id, args.cutoff

    def hybrid(q):
        v = encoder.encode_query(q)
        fusion.rrf([[d for d, _ in index.bm25(q, k)], [d for d, _ in index.knn(v, k, model_id=mid)]],
                   rrf_k=args.rrf_k, depth=k)

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
    out = {name: timing.summarize(timing.time_calls(fn, inputs, repeat=args.latency_reps, warmup=5))
           for name, (fn, inputs) in stages.items()}
    floor = out["http_floor"]["median"]
    out["ratio_to_floor"] = {s: out[s]["median"] / floor for s in ("bm25", "bm25_no_stop", "knn")}
    return out


def timings(ctx, cache_report: dict, index_state: str) -> dict:
    """Wall time and phases of this run (warm: nothing re-encoded, index reused), logged to
    ``runs/wall_times.jsonl``, with the latest cold and warm runs of that log."""
    state = "warm" if cache_report["misses"] == 0 and index_state == "reused" else "cold"
    wall, phases = ctx.wall_s(), dict(ctx.phases)
    log = ctx.runs_dir() / "wall_times.jsonl"
    append_jsonl(log, {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "wall_s": wall, "state": state,
                       "phases_s": phases})
    record_written(log)  # the log the chapter offers for download, as this run left it
    return {"wall_s": wall, "state": state, "phases_s": phases, "embedding_cache": cache_report,
            "history": last_by_state(log)}


def last_by_state(log_path: Path) -> dict:
    """The latest cold and warm wall times recorded in the wall-time log."""
    latest = {}
    for line in log_path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        latest[rec["state"]] = {"wall_s": rec["wall_s"], "date": rec["date"]}
    return latest


def parameters(args) -> dict:
    return {"k": args.cutoff, "deep_k": args.depth, "rrf_k": args.rrf_k,
            "fusion_depths": [args.cutoff, args.depth], "latency_reps": args.latency_reps,
            "measures": list(MEASURES), "text_fields": list(SEARCH_FIELDS), "vector_text": VECTOR_TEXT,
            "ties": TIES}


def run(ctx) -> dict:
    a = ctx.args
    check_arguments(a)
    with ctx.phase("load"):
        concepts, corpus, sets = load_inputs(ctx)
        every = [p for pairs in sets.values() for p in pairs]
        queries = Queries([p.id for p in every], [p.question for p in every])
    with ctx.phase("server"):
        conn = ctx.arcadedb(DATABASE)
    with conn:
        encoder, vectors, cache_report = embed_corpus(ctx, concepts)
        index, engine = open_index(ctx, conn, concepts, corpus, encoder, vectors)
        runs = search_runs(ctx, index, encoder, queries)
        exact = ExactVectors([c.name for c in concepts], vectors, model_id=encoder.model_id)
        exact_run = VectorRetriever("exact", exact.knn, encoder).search(queries, a.cutoff)
        with ctx.phase("latency"):
            latency = measure_latency(index, encoder, [p.question for p in sets[LATENCY_SET]], a)
        sql = index.queries()
    texts = {c.name: indexed_text(c) for c in concepts}
    results_sets = {key: score_set(ctx, key, pairs, runs, exact_run, texts) for key, pairs in sets.items()}
    for method, method_run in runs.items():
        ctx.write_run(method, method_run)
    say("main R@10: " + ", ".join(f"{m} {v['R@10']:.3f}" for m, v in results_sets["main"]["metrics"].items()))
    return {
        "provenance": ctx.provenance(corpus=corpus, model=encoder.provenance(), engine=engine,
                                     parameters=parameters(a)),
        "queries": {**sql, "rrf_python": inspect.getsource(fusion.rrf)},
        "methods": list(runs),
        "sets": results_sets,
        "reproduction": reproduce(ctx, results_sets[PUBLISHED_SET]),
        "latency_ms": latency,
        "timings": timings(ctx, cache_report, engine["index_state"]),
    }


if __name__ == "__main__":
    study_main(__file__, run, add_arguments)
