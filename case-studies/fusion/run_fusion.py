"""Fusion inside ArcadeDB and beyond RRF, on the flagship's gold sets and five classic collections.

    gabarito study fusion                                   # everything (long: it may encode the collections)
    python case-studies/fusion/run_fusion.py --corpora adi --limit 20 --resamples 1000   # quick

For every corpus (smallest first; see ``corpora.py``) one ArcadeDB database holds the texts
(FULL_TEXT) and the all-mpnet-base-v2 vectors (LSM_VECTOR). BM25 and the vector search retrieve
100 documents per question; then (``methods.py``):

1. **identity check** -- ArcadeDB's own RRF (``vector.fuse``, one statement per question) against
   the pipeline's Python RRF on every question of every gold set, same lists, depth and k;
   each difference explained (``identity.py``);
2. **fusion functions** -- RRF with k in {1, 10, 60, 100}, weighted RRF and the convex combination
   of min-max scores (both weights cross-fitted: chosen on one half of the questions, scored on
   the other), DBSF in Python and in ArcadeDB, CombSUM and CombMNZ; nDCG@10, RR@10 and R@10 with
   bootstrap intervals, and paired tests of each fusion against RRF k = 60, Holm-corrected over
   those comparisons (the scorer's family :class:`gabarito.measure.families.Against`);
3. **latency** -- one round trip (the native statement) against two (BM25, kNN) and RRF in Python,
   with the HTTP floor and the machine's load (``latency.py``).

Results go to ``results.json``; TREC runs of every method and the qrels to ``runs/``.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.core.runs import Run
from gabarito.measure.score import score_runs
from gabarito.notes import note
from gabarito.measure.families import Against
from gabarito.retrieval import fusion
from gabarito.retrieval.arcadedb import ArcadeClient, ArcadeIndex
from gabarito.retrieval.arcadedb.native_fusion import fuse_sql
from gabarito.retrieval.reuse import index_record, open_or_build
from gabarito.study.runner import say, study_main
from studies.fusion import corpora, identity, latency, methods

MEASURES = ("nDCG@10", "RR@10", "R@10")
CUTOFF = 10
NOT_TESTED = {methods.BASELINE, "rrf_k60_native", *methods.FIRST_STAGES}
LATENCY_DEPTHS = (10, 100)


def add_arguments(ap) -> None:
    ap.add_argument("--corpora", default=",".join(corpora.ORDER),
                    help=f"comma-separated subset of {', '.join(corpora.ORDER)} (run in that order)")
    ap.add_argument("--depth", type=int, default=100, help="documents each first stage retrieves and fusion reads")
    ap.add_argument("--limit", type=int, default=None,
                    help="development only: the first N judged questions of each set (recorded in the results)")
    ap.add_argument("--latency-corpora", default=f"{corpora.FLAGSHIP},npl",
                    help="corpora whose questions are timed (the flagship's main set; a collection's queries)")
    ap.add_argument("--latency-passes", type=int, default=5, help="timed passes over the questions, per stage")


def chosen(args) -> tuple[list[str], set[str]]:
    names = [n.strip().lower() for n in args.corpora.split(",") if n.strip()]
    timed = {n.strip().lower() for n in args.latency_corpora.split(",") if n.strip()}
    unknown = sorted((set(names) | timed) - set(corpora.ORDER))
    if unknown or not names:
        raise GabaritoError(f"unknown corpus {unknown[0] if unknown else '(none)'}; known: {', '.join(corpora.ORDER)}")
    if args.depth < CUTOFF or args.latency_passes < 1 or (args.limit is not None and args.limit < 2):
        raise GabaritoError(f"need --depth >= {CUTOFF}, --latency-passes >= 1 and --limit >= 2")
    return [n for n in corpora.ORDER if n in names], timed


def open_index(ctx, conn, corpus, docs, encoder) -> tuple[ArcadeIndex, ArcadeClient, dict]:
    """The corpus's own database on the study's server, its index reused when it holds exactly this."""
    user, password = conn.client.session.auth
    client = ArcadeClient(conn.client.url, user, password, corpus.database)
    if ctx.args.cold and client.database_exists():
        client.drop_database()
    if not client.database_exists():
        client.create_database()
    index = ArcadeIndex(client, corpus.type_name)
    with ctx.phase(f"{corpus.key}/index"):
        state = open_or_build(index, corpus.parts, fields=corpus.fields, rows=corpus.rows, vectors=docs,
                              model_id=encoder.model_id, analyzer=corpus.analyzer, progress=True)
    with ctx.phase(f"{corpus.key}/warm_up"):
        graph_s = index.warm_up(docs[0])
    info = index.info()
    record = {"database": corpus.database, "type": corpus.type_name, "index_state": state,
              **index_record(corpus.parts, docs),
              "vector_graph_build_s": round(graph_s, 3), "text_index": info["text_index"],
              "vector_index": info["vector_index"], "analyzer": info.get("analyzer")}
    return index, client, record


def score_set(ctx, runs: dict[str, Run], qrels) -> dict:
    """Means and intervals of every method; each fusion tested against RRF k = 60 (Holm over those)."""
    family = Against(methods.BASELINE, among=tuple(m for m in runs if m not in NOT_TESTED))
    return score_runs(runs, qrels, MEASURES, resamples=ctx.resamples, seed=ctx.seed, family=family).to_dict()


def tuning_record(fitted: dict) -> dict:
    return {name: {k: v for k, v in fit.items() if k != "run"} for name, fit in fitted.items()}


def study_set(ctx, corpus, key: str, index, vectors, runs: dict[str, Run]) -> tuple[dict, dict[str, Run]]:
    """One judged set: tuned runs, identity check, scores."""
    qrels = corpus.sets[key]
    qids = qrels.judged()
    fitted = methods.tuned_runs(runs, qrels, ctx.args.depth, ctx.seed)
    tuned = {name: fit["run"] for name, fit in fitted.items()}
    with ctx.phase(f"{corpus.key}/identity"):
        check = identity.check(index, corpus.queries, vectors, runs[methods.BASELINE], runs["rrf_k60_native"],
                               ctx.args.depth, 60, qids)
    with ctx.phase(f"{corpus.key}/statistics"):
        scored = score_set(ctx, {**runs, **tuned}, qrels)
    ctx.write_qrels(f"{corpus.key}.{key}", qrels)
    result = {"gold_file": corpus.gold_files[key], "identity": check,
              "dbsf_agreement": identity.agreement(runs["dbsf"], runs["dbsf_native"], qids),
              "tuning": tuning_record(fitted), **scored}
    say(f"  {key}: n={scored['n']}, identical {check['identical_full']}/{check['n']} "
        f"(top-10 {check['identical_top10']}), unexplained {check['causes']['unexplained']}; nDCG@10 "
        + ", ".join(f"{m} {v['nDCG@10']:.3f}" for m, v in scored["metrics"].items()))
    return result, tuned


def search(ctx, corpus, index, encoder) -> tuple[dict[str, Run], dict]:
    depth = ctx.args.depth
    with ctx.phase(f"{corpus.key}/python_searches"):
        runs, prov = methods.python_runs(index, encoder, corpus.queries, depth)
    with ctx.phase(f"{corpus.key}/native_searches"):
        native, native_prov = methods.native_runs(index, encoder, corpus.queries, depth)
    return {**runs, **native}, {**prov, "native": native_prov}


def timed(ctx, corpus, index, encoder, vectors) -> dict:
    qids = corpus.sets["main" if corpus.key == corpora.FLAGSHIP else corpus.key].judged()
    sub = corpus.queries.subset(qids)
    vecs = sub.vectors(encoder)
    with ctx.phase(f"{corpus.key}/latency"):
        return {str(d): latency.measure(index, encoder, sub.texts, vecs, depth=d, rrf_k=60,
                                        passes=ctx.args.latency_passes) for d in LATENCY_DEPTHS}


def study_corpus(ctx, conn, corpus, vec, timed_corpora: set[str], engine: dict) -> dict:
    with ctx.phase("model_load"):
        encoder = vec.encoder(corpora.MODEL_KEY)
    say(f"== {corpus.key}: {len(corpus.rows)} documents, {len(corpus.queries)} questions in "
        f"{len(corpus.sets)} set(s)")
    with ctx.phase(f"{corpus.key}/encode"):
        docs = corpora.embed(corpus, vec)
    index, client, engine["databases"][corpus.key] = open_index(ctx, conn, corpus, docs, encoder)
    try:
        vectors = corpus.queries.vectors(encoder)
        runs, prov = search(ctx, corpus, index, encoder)
        sets, tuned = {}, {}
        for key in corpus.sets:
            sets[key], fitted = study_set(ctx, corpus, key, index, vectors, runs)
            for name, run in fitted.items():
                tuned.setdefault(name, Run(name=name)).update(run)
        lat = timed(ctx, corpus, index, encoder, vectors) if corpus.key in timed_corpora else None
        sql = {**index.queries(), "native": fuse_sql(corpus.type_name, index.info()["text_index"],
                                                     index.info()["vector_index"], ["fusion", "k", "limit"])}
    finally:
        client.close()
    for name, run in {**runs, **tuned}.items():  # first stages whole (the fusions' inputs), fusions to the cut
        cut = run if name in methods.FIRST_STAGES else run.cut(CUTOFF)
        ctx.write_run(f"{corpus.key}.{name}", cut, tag=f"gabarito-fusion-{name}")
    return {"record": corpus.record, "sets": sets, "latency_ms": lat, "retrievers": prov, "sql": sql}


def parameters(ctx, names: list[str], timed_corpora: set[str]) -> dict:
    a = ctx.args
    return {"corpora": names, "depth": a.depth, "cutoff": CUTOFF, "measures": list(MEASURES),
            "baseline": methods.BASELINE, "rrf_ks": list(methods.RRF_KS), "tuning_grid": list(methods.GRID),
            "tuning_measure": methods.TUNE_MEASURE, "tuning": "two-fold cross-fitting, halves drawn with the seed",
            "tuning_ties": "equal means: the weight nearest 0.5, then the smaller",
            "multiple_comparisons": "Holm over the fusions tested against the baseline, per set and measure",
            "not_tested": sorted(NOT_TESTED), "limit": a.limit, "latency_corpora": sorted(timed_corpora),
            "latency_depths": list(LATENCY_DEPTHS), "latency_passes": a.latency_passes,
            "latency_max_load": latency.MAX_LOAD, "ties": note("ranking.ties_by_doc_id"),
            "trec_files": {"first_stages_depth": a.depth, "fusions_depth": CUTOFF}}


def run(ctx) -> dict:
    names, timed_corpora = chosen(ctx.args)
    with ctx.phase("load"):  # every set's judgments checked before anything is searched
        loaded = {name: corpora.load_corpus(ctx, name, ctx.args.limit) for name in names}
    vec = corpora.Vectors(device=ctx.device)
    results = {}
    with ctx.arcadedb(f"fusion_{names[0]}", heap="2g") as conn:
        engine = {"name": "ArcadeDB", "version": conn.client.server_version(),
                  "mode": note("engine.arcadedb_external") if conn.server is None
                  else note("engine.arcadedb_embedded"),
                  "databases": {}}
        for name in names:
            results[name] = study_corpus(ctx, conn, loaded[name], vec, timed_corpora, engine)
    encoder = vec.encoder(corpora.MODEL_KEY)
    flagship = loaded.get(corpora.FLAGSHIP)
    corpus = {**(flagship.record if flagship else {}), "corpora": {n: c.record for n, c in loaded.items()}}
    used = {rel for c in loaded.values() for rel in c.gold_files.values()}
    ctx.gold_sha256 = {rel: sha for rel, sha in ctx.gold_sha256.items() if rel in used}
    return {
        "provenance": ctx.provenance(corpus=corpus, model=encoder.provenance(), engine=engine,
                                     parameters=parameters(ctx, names, timed_corpora)),
        "methods": {m: methods.DESCRIPTIONS[m] for m in methods.DESCRIPTIONS},
        "measures": list(MEASURES),
        "corpora": results,
        "rrf_python": inspect.getsource(fusion.rrf),
        "embedding_cache": vec.report,
    }


if __name__ == "__main__":
    study_main(__file__, run, add_arguments)
