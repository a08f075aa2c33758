"""BM25 side by side: ArcadeDB FULL_TEXT over HTTP, Lucene (Pyserini), bm25s and Tantivy on the
five classic collections, in one run; and where ArcadeDB's BM25 time goes.

Per collection: every engine indexes the same documents (matched analyzer and k1/b where the
engine allows it: see ``bm25_engines``), answers every judged query (top 10), and is timed on
the same queries *interleaved* query by query (so each engine meets the same load on a shared
machine), single-threaded: one query at a time; in-process BLAS limited to one thread. Reported:
nDCG@10 (frozen qrels of ``case-studies/standard_collections``), agreement of the top-10 lists
with ArcadeDB's (``measure.parity``), queries per second and the ratio to ArcadeDB, build time.

Where the time goes (ArcadeDB): the HTTP floor (``SELECT 1``), the number of documents each
query matches (``count(*)``), the same match without ``ORDER BY``/score, the same query on a
FULL_TEXT index with Lucene's EnglishAnalyzer (stop words, stemming: fewer matches), and the
standard index queried without English stop words; each variant's nDCG@10 beside its speed.

    python case-studies/peers/bench_bm25.py                      # all five (~10 min)
    python case-studies/peers/bench_bm25.py --collections adi    # quick
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.inputs.collections import COLLECTIONS, load_collection
from gabarito.measure import metrics
from gabarito.measure.parity import ARCADEDB_BM25_B, ARCADEDB_BM25_K1, BM25Reference, parity
from gabarito.notes import note
from gabarito.core.runs import Qrels
from gabarito.measure.timing import in_process, interleaved, load_average
from gabarito.retrieval.arcadedb import ArcadeClient, ArcadeIndex, ArcadeServer, lucene_escape, package_version
from gabarito.study.runner import say, study_main
from studies.peers.bm25_engines import LuceneBM25, TantivyBM25, dist_version, distinct_terms

HERE = Path(__file__).resolve().parent

ORDER = ("adi", "cranfield", "cisi", "medline", "npl")
K = 10
#: Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), for the query-side variant.
ENGLISH_STOP = frozenset("a an and are as at be but by for if in into is it no not of on or such that the their "
                         "then there these they this to was will with".split())
#: How each engine was set up, as notes: ArcadeDB FULL_TEXT (StandardAnalyzer) over HTTP on 127.0.0.1;
#: Lucene via Pyserini/Anserini and Tantivy on the same pre-split tokens, both storing document lengths
#: in one byte (lossy); bm25s (method='lucene') with the standard analyzer reproduced in Python.
ENGINES = {e: note(f"peer.bm25_{e}", k1=ARCADEDB_BM25_K1, b=ARCADEDB_BM25_B)
           for e in ("arcadedb", "lucene", "bm25s", "tantivy")}


ENGINE_NAMES = {"lucene": "Lucene (Pyserini)", "bm25s": "bm25s", "tantivy": "Tantivy"}


def add_arguments(ap) -> None:
    ap.add_argument("--collections", default=",".join(ORDER), help="comma-separated subset")
    ap.add_argument("--min-queries", type=int, default=100, help="timed queries per engine, at least")
    ap.add_argument("--heap", default="2g", help="JVM heap of the embedded ArcadeDB server")


def load_checked(ctx, name: str):
    """The collection, once its qrels are the frozen ``standard_collections/qrels/<name>.txt``."""
    c = load_collection(name, mirror=ctx.mirror())
    rel = f"../standard_collections/qrels/{name}.txt"
    if rel not in ctx.gold_sha256 or Qrels(c.qrels).to_trec() != (ctx.spec.dir / rel).read_text(encoding="utf-8"):
        raise GabaritoError("qrels differ from the frozen file (or it is not frozen)", path=ctx.spec.dir / rel)
    return c


def arcadedb_types(client: ArcadeClient, docs: list[dict]) -> tuple[ArcadeIndex, ArcadeIndex, float]:
    """Two types: the standard analyzer (the peer) and the English one (a speed option). The vector
    index is unused here: one random 8-dimensional vector per document fills it."""
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(len(docs), 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    standard, english = ArcadeIndex(client, "DocStandard"), ArcadeIndex(client, "DocEnglish")
    standard.create(["text"], 8, "none")
    english.create(["text"], 8, "none", analyzer="english")
    t0 = time.perf_counter()
    standard.ingest(docs, vecs, batch_size=200, progress=False)
    ingest_s = time.perf_counter() - t0
    english.ingest(docs, vecs, batch_size=200, progress=False)
    return standard, english, ingest_s


def built(make):
    t0 = time.perf_counter()
    engine = make()
    return engine, time.perf_counter() - t0


def where_time_goes(client: ArcadeClient, standard: ArcadeIndex, questions: list[str]) -> dict:
    """Matched documents per query (``count(*)``) and the SQL of the variants timed."""
    index = standard.info()["text_index"]
    count_sql = f"SELECT count(*) AS n FROM DocStandard WHERE SEARCH_INDEX('{index}', :q) = true"
    match_sql = f"SELECT doc_id FROM DocStandard WHERE SEARCH_INDEX('{index}', :q) = true LIMIT :k"
    matched = [int(client.query(count_sql, {"q": lucene_escape(q)})[0]["n"]) for q in questions]
    return {"matched": matched, "count_sql": count_sql, "match_sql": match_sql,
            "match_only": lambda q: client.query(match_sql, {"q": lucene_escape(q), "k": K})}


def no_stop(question: str) -> str:
    return " ".join(t for t in distinct_terms(question) if t not in ENGLISH_STOP) or question


def collection_stage(ctx, name: str) -> dict:
    c = load_checked(ctx, name)
    judged = c.judged_queries()
    qrels = Qrels({q.id: c.qrels[q.id] for q in judged})
    texts = {d.id: d.text for d in c.documents}
    docs = [{"doc_id": d.id, "text": d.text} for d in c.documents]
    say(f"== {name}: {len(docs)} documents, {len(judged)} judged queries")
    root = ctx.db_dir("peers") / name
    shutil.rmtree(root, ignore_errors=True)
    with ArcadeServer(root, heap=ctx.args.heap) as server:
        client = ArcadeClient(server.url, server.user, server.password, f"peers_{name}")
        client.create_database()
        standard, english, ingest_s = arcadedb_types(client, docs)
        engines = {"arcadedb": lambda q: standard.bm25(q, K)}
        build_s = {"arcadedb": ingest_s}
        ref, build_s["bm25s"] = built(lambda: BM25Reference(texts))
        tan, build_s["tantivy"] = built(lambda: TantivyBM25(texts))
        luc, build_s["lucene"] = built(lambda: LuceneBM25(texts, root / "lucene"))
        engines.update({"lucene": lambda q: luc.search(q, K), "bm25s": lambda q: ref.search(q, K),
                        "tantivy": lambda q: tan.search(q, K)})
        questions = [q.query for q in judged]
        runs = {e: {q.id: fn(q.query) for q in judged} for e, fn in engines.items()}
        wt = where_time_goes(client, standard, questions)
        variants = {"english_analyzer": lambda q: english.bm25(q, K), "no_stop_words": lambda q: standard.bm25(no_stop(q), K)}
        runs.update({v: {q.id: fn(q.query) for q in judged} for v, fn in variants.items()})
        timed_fns = {**engines, "http_floor": lambda q: standard.floor(), "match_only_no_score": wt["match_only"],
                     **variants}
        for fn in timed_fns.values():  # one untimed pass: no engine is timed on a cold start
            for q in questions[:5]:
                fn(q)
        latency = in_process(lambda: interleaved(timed_fns, questions, ctx.args.min_queries))
        client.close()
    shutil.rmtree(root / "lucene", ignore_errors=True)
    return summarise(name, c, judged, qrels, runs, latency, build_s, wt, versions={"lucene": luc.version,
                                                                                 "tantivy": tan.version,
                                                                                 "bm25s": ref.version})


def summarise(name, c, judged, qrels, runs, latency, build_s, wt, versions) -> dict:
    ndcg = {m: metrics.evaluate(run, qrels, ["nDCG@10"])["nDCG@10"] for m, run in runs.items()}
    base_qps = latency["arcadedb"]["qps"]
    engines = {}
    for e in runs:
        row = {"ndcg@10": metrics.mean(ndcg[e]), "latency_ms": latency[e], "qps": latency[e]["qps"],
               "qps_ratio_to_arcadedb": latency[e]["qps"] / base_qps if base_qps else None}
        if e != "arcadedb":
            row["agreement_with_arcadedb"] = parity(runs["arcadedb"], runs[e], ndcg["arcadedb"], ndcg[e], k=K)
        if e in build_s:
            row["build_s"] = build_s[e]
        engines[e] = row
    matched = np.asarray(wt["matched"], dtype=float)
    floor = latency["http_floor"]["median"]
    stages = {"http_floor_ms": latency["http_floor"],
              "bm25_over_floor": latency["arcadedb"]["median"] / floor if floor else None,
              "match_only_over_floor": latency["match_only_no_score"]["median"] / floor if floor else None,
              "matched_docs": {"median": float(np.median(matched)), "mean": float(matched.mean()),
                               "max": int(matched.max()), "share_of_collection_median": float(np.median(matched))
                               / len(c.documents)},
              "count_sql": wt["count_sql"], "match_sql": wt["match_sql"]}
    say(f"  nDCG@10 " + ", ".join(f"{e} {engines[e]['ndcg@10']:.3f}" for e in engines)
        + " | qps " + ", ".join(f"{e} {engines[e]['qps']:.0f}" for e in engines)
        + f" | floor {floor:.2f} ms, matched median {stages['matched_docs']['median']:.0f}")
    return {"n_docs": len(c.documents), "n_queries": len(judged), "engines": engines, "stages": stages,
            "versions": versions, "load_average": load_average()}


def run(ctx) -> dict:
    names = [n.strip().lower() for n in ctx.args.collections.split(",") if n.strip()]
    if not names or any(n not in COLLECTIONS for n in names):
        raise GabaritoError(f"unknown collection(s) in {names}; known: {', '.join(ORDER)}")
    if ctx.args.arcadedb_url:
        raise GabaritoError("the peers benchmark measures a server it starts itself: unset --arcadedb-url")
    ctx.gold_sha256 = {rel: sha for rel, sha in ctx.gold_sha256.items()
                       if rel in {f"../standard_collections/qrels/{n}.txt" for n in names}}
    load_start = load_average()
    collections = {}
    for name in names:
        with ctx.phase(f"collection {name}"):
            collections[name] = collection_stage(ctx, name)
    load_end = load_average()
    prov = ctx.provenance(corpus={"collections": names}, model=None,
                          engine={"arcadedb": {"name": "ArcadeDB", "version": package_version(),
                                               "package": "arcadedb-embedded"},
                                  **{e: {"name": ENGINE_NAMES[e], "version": dist_version(d), "package": d}
                                     for e, d in (("lucene", "pyserini"), ("bm25s", "bm25s"), ("tantivy", "tantivy"))}},
                          parameters={"k": K, "k1": ARCADEDB_BM25_K1, "b": ARCADEDB_BM25_B,
                                      "min_timed_queries": ctx.args.min_queries, "heap": ctx.args.heap,
                                      "timing": "wall clock per call, engines interleaved query by query, "
                                                "one query at a time; in-process BLAS at 1 thread",
                                      "english_stop_words": sorted(ENGLISH_STOP), "engine_notes": ENGINES})
    prov["machine"].update(load_average_start=load_start, load_average_end=load_end,
                           latency_valid=bool(load_start and load_end and max(load_start[0], load_end[0]) <= 1.0))
    return {"provenance": prov, "collections": collections, "engines": ENGINES}


if __name__ == "__main__":
    study_main(__file__, run, add_arguments)
