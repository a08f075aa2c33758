"""A cross-encoder taught by each collection's own text (weak supervision), fused with the first stage.

For each classic collection, a reader is trained from all-MiniLM-L6-v2's BERT weights (plus a new
one-output head) on pseudo-queries made of that collection's own documents: a document's title
(or first sentence) asks, the rest of the document answers (MacAvaney et al., SIGIR 2019). Hard
negatives come from the in-memory BM25 ranking for the pseudo-query (the source document left
out), filtered for false negatives with the packaged all-MiniLM-L6-v2 bi-encoder; one random
document per pseudo-query is an easy negative. **No judgment of any collection is read to train
the ``weak`` recipe**; the ``weak+judged`` recipe adds the judged pairs of the four other
collections (the recipe of ``train_rerankers.py``).

On the collection's judged questions the reader re-reads the top N (10, 20, 50, 100) of the
committed first stages (BM25 and dense all-mpnet-base-v2, ``runs/<collection>.<method>.trec``)
three ways: its order replaces the first stage's; RRF of the two orders; a convex combination of
min-max normalized scores whose weight is chosen on the other half of the questions (two-fold
cross-fitting). Each variant is tested against its first stage (paired randomization, Holm over
the variants of that first stage). The declared primary comparison is RRF at N = 20 against BM25,
Holm-corrected over the five collections; the lesson (re-reading lifts BM25 more than a dense
first stage) is the paired difference of the two lifts per question, Holm over the collections.
The reader's AUC on judged pairs (positives against BM25's hard negatives and against random
documents) sits beside BM25's own AUC on the same pairs.

    python case-studies/standard_collections/train_weak_rerankers.py
    python case-studies/standard_collections/train_weak_rerankers.py --folds adi --steps 20   # quick
"""

from __future__ import annotations

import random
from pathlib import Path

from gabarito.hashing import sha256_file
from gabarito.core.methods import reading
from gabarito.core.runs import Run
from gabarito.measure.readings import GRID, HOWS, PRIMARY, lift_difference, primary_holm, reading_variants, stage_report
from gabarito.retrieval.memory import BM25
from gabarito.retrieval.protocol import Queries
from gabarito.retrieval.rerank import CrossEncoderReranker
from gabarito.retrieval.rerank.memo import MemoReader
from gabarito.retrieval.rerank.recipe import FILTER_MODEL, NEGATIVE_DEPTH, weak_plan as plan
from gabarito.retrieval.rerank.training import pair_scores, separability
from gabarito.retrieval.rerank.weak import pseudo_queries, weak_pairs
from gabarito.study.readers import trained_model, training_arguments, training_config
from gabarito.study.runner import say, variant_main
from studies.standard_collections import reranker_extras as extras
from studies.standard_collections import train_rerankers as judged

HERE = Path(__file__).resolve().parent

FOLDS = judged.COLLECTIONS
RECIPES = ("weak", "weak+judged")
FIRST_STAGES = {"bm25": "bm25_arcadedb_english", "dense": "dense_mpnet"}
NS = (10, 20, 50, 100)
MEASURES = ("nDCG@10", "RR@10", "AP@100")
PSEUDO_LIMIT = 1000


def add_arguments(ap):
    ap.add_argument("--folds", default=",".join(FOLDS), help="collections, comma separated")
    ap.add_argument("--recipes", default=",".join(RECIPES), help=f"training recipes, comma separated ({', '.join(RECIPES)})")
    training_arguments(ap)


def weak_training_pairs(c, seed: int, encoder) -> tuple[list, dict]:
    """The collection's pseudo-query pairs (its documents only, no judgment) and their counts."""
    found = pseudo_queries(c.documents, limit=PSEUDO_LIMIT, seed=seed)
    texts = {d.id: d.text for d in c.documents}
    bm25 = BM25(texts)
    cands = {p.doc_id: [d for d, _ in bm25.search(p.query, NEGATIVE_DEPTH + 1)] for p in found["pseudo"]}
    pairs, counts = weak_pairs(found["pseudo"], texts, cands, plan(seed), encode=encoder.encode,
                               prefix=f"{c.name}:")
    return pairs, {**counts, "documents": found["counts"],
                   "examples": [{"pseudo_query": p.query, "source": p.source, "doc_id": p.doc_id}
                                for p in found["pseudo"][:3]]}


def evaluate_fold(ctx, c, reader, stages: dict | None = None, ns: tuple = NS) -> tuple[dict, dict]:
    """Scores of each first stage (default: all of ``FIRST_STAGES``) and its readings of the top
    ``ns`` (a :func:`~gabarito.measure.readings.stage_report` each, stored as ``report``); the
    per-question nDCG@10 the lesson reads."""
    judged_q = c.judged_queries()
    queries = Queries([q.id for q in judged_q], [q.query for q in judged_q])
    texts = {d.id: d.text for d in c.documents}
    qrels = judged._graded(c.name, c.qrels)
    out, per_query = {}, {}
    for stage, method in (stages or FIRST_STAGES).items():
        first = Run.from_trec(judged._run_file(c.name, method)).cut(max(NS))
        with ctx.phase(f"second reading ({c.name}, {stage})"):
            variants, weights = reading_variants(first, queries, texts, reader, qrels, ns, seed=ctx.seed)
        runs = {stage: first, **variants}
        scored = stage_report(runs, qrels, stage, MEASURES, resamples=ctx.resamples, seed=ctx.seed)
        out[stage] = {"method": method, "run_sha256": sha256_file(judged._run_file(c.name, method)),
                      "report": scored.to_dict(per_query=False), "convex_weights": weights}
        per_query[stage] = {k: scored.values(k, "nDCG@10") for k in runs}
    return out, per_query


def auc_beside_bm25(ctx, c, reader) -> dict:
    """The reader's and BM25's AUC on the same judged pairs of the collection (never trained on)."""
    pairs = judged._training_pairs({c.name: c}, [c.name], ctx.seed)
    sample = random.Random(f"{ctx.seed}:auc").sample(pairs, min(extras.SEPARABILITY_PAIRS, len(pairs)))
    bm25 = BM25({f"{c.name}:{d.id}": d.text for d in c.documents})
    bm25_scores = bm25.score_pairs([(p.query, p.doc_id) for p in sample])
    return {"pairs": len(sample), "reader": separability(sample, pair_scores(reader, sample)),
            "bm25": separability(sample, bm25_scores)}


def lesson(per_query: dict, seed: int, resamples: int) -> dict:
    """Per question, the primary reading's lift over BM25 minus its lift over the dense first stage."""
    key = reading(*PRIMARY)
    row = lift_difference(per_query["bm25"]["bm25"], per_query["bm25"][key], per_query["dense"]["dense"],
                          per_query["dense"][key], names=("bm25", "dense"), resamples=resamples, seed=seed)
    return {"variant": key, **row}


def run_fold(ctx, collections: dict, held: str, recipe: str, encoder) -> dict:
    c = collections[held]
    with ctx.phase(f"pseudo-queries ({held})"):
        pairs, counts = weak_training_pairs(c, ctx.seed, encoder)
    if recipe == "weak+judged":
        pairs = pairs + judged._training_pairs(collections, [n for n in FOLDS if n != held], ctx.seed)
    config = training_config(ctx, len(pairs))
    folder, record = trained_model(ctx, f"{held}-{recipe}", pairs, config)
    reader = MemoReader(CrossEncoderReranker(folder, max_length=config.max_length, batch_size=32,
                                             device=ctx.args.device))
    stages, per_query = evaluate_fold(ctx, c, reader)
    with ctx.phase(f"AUC ({held})"):
        auc = auc_beside_bm25(ctx, c, reader)
    say(f"weak_rerankers: {held} ({recipe}): {reader.pairs_scored} pairs read in {reader.seconds:.0f} s")
    return {"collection": held, "recipe": recipe, "weak_pairs": counts, "training": record, "reader": reader.provenance(),
            "first_stages": stages, "auc": auc, "per_query_nDCG@10": per_query,
            "lesson": lesson(per_query, ctx.seed, ctx.resamples),
            "cost": {"pairs_read": reader.pairs_scored, "seconds": round(reader.seconds, 1)}}


def run(ctx) -> dict:
    from gabarito.retrieval.models.encoders import load_encoder

    a = ctx.args
    folds = [f.strip() for f in a.folds.split(",") if f.strip()]
    recipes = [r.strip() for r in a.recipes.split(",") if r.strip()]
    collections = judged.load_collections(ctx)
    encoder = load_encoder(FILTER_MODEL, device=a.device)
    results = {}
    for recipe in recipes:
        for held in folds:
            results[f"{held}/{recipe}"] = run_fold(ctx, collections, held, recipe, encoder)
    parameters = {"folds": folds, "recipes": recipes, "first_stages": FIRST_STAGES, "ns": list(NS),
                  "hows": list(HOWS), "grid": list(GRID), "primary": list(PRIMARY), "measures": list(MEASURES),
                  "pseudo_limit": PSEUDO_LIMIT, "pair_plan": plan(ctx.seed).__dict__, "filter_model": FILTER_MODEL,
                  "steps": a.steps, "max_length": a.max_length, "loss": a.loss, "base_model": a.base_model,
                  "learning_rate": a.lr, "head_learning_rate": a.head_lr}
    corpus = {n: {"n_docs": len(c.documents), "n_judged_queries": len(c.judged_queries())}
              for n, c in collections.items()}
    engine = {"name": "sentence-transformers CrossEncoder (trained here)", "device": a.device or "cpu"}
    return {"folds": results, "primary": primary_holm(results),
            "provenance": ctx.provenance(corpus=corpus, model=encoder.provenance(), engine=engine,
                                         parameters=parameters)}


def statistics(results, ctx) -> dict:
    """What the study stores beside its measurements (``--statistics-only`` recomputes it from a
    written file): the primary comparisons' Holm p over the family ``study.json`` declares."""
    from studies.standard_collections.weak_findings import PRIMARY_HOLM, compute_primary_holm

    return {PRIMARY_HOLM: compute_primary_holm(results)}


if __name__ == "__main__":
    variant_main(HERE, run, add_arguments, name="weak_rerankers", results="rerankers_weak.json",
                 title="A cross-encoder taught by each collection's own text, fused with the first stage",
                 doc=__doc__, statistics=statistics)
