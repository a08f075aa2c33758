"""A cross-encoder taught by the ontology's own concepts (weak supervision), re-reading the flagship's first stages.

A reader is trained from all-MiniLM-L6-v2's BERT weights (plus a new one-output head) on
pseudo-queries made of the Social_Acceptance concepts alone -- **no question and no gold file of
any set, and no judgment, is read to train it**. Each concept gives up to two pseudo-queries:

* ``name``: its name made readable (underscores and CamelCase split, lower case: ``Climate_Belief``
  asks "climate belief");
* ``first sentence``: the first sentence of its description (when the description splits into a
  first sentence of 3 to 40 words and a rest of at least 8 words,
  :func:`gabarito.retrieval.rerank.weak.split_pseudo_query`).

The positive text never begins with the concept's name, so that a pair is not a bare string
match: for the ``name`` pseudo-query it is the concept's indexed text (``c.text()``, "name:
description") without the leading "name:" and without the name again (or its plural) when the
description opens with it; for the ``first sentence`` pseudo-query it is the rest of the description. The texts the
negatives are drawn from are the concepts' texts without their names in the same way (a positive
without a name among negatives with one would teach the reader that shape). Hard negatives come
from the in-memory BM25 ranking of the concept texts for the pseudo-query (top 30, the source
concept left out), filtered for false negatives with the packaged all-MiniLM-L6-v2 bi-encoder; one
random concept per pseudo-query is an easy negative (the recipe of ``train_weak_rerankers.py``).

At test time the reader reads each concept's whole ``c.text()`` (the text the flagship's vector
search encodes). It re-reads the top N (10, 20, 50) of the committed first stages (``runs/bm25.trec``,
``runs/vector.trec``) for every question of the five gold sets three ways (its order; RRF of the
two orders; a convex combination whose weight is chosen on the other half of the questions), and
each set is scored twice: against its gold (``runs/qrels.<set>.txt``, one expected concept) and
against the language-model assessors' graded judgments (``../judgments/qrels/<set>.txt``, grades
0/1/2, nDCG's gain is the grade; checked against ``judgments.lock.json`` first). Each variant is
tested against its first stage (paired randomization on nDCG@10, Holm over the variants of that
first stage); the primary comparison (RRF at N = 20 against BM25) and the lesson (the reading
lifts BM25 more than the vector search, per question) are Holm-corrected over the five sets. The
reader's AUC on gold pairs (the expected concept against a BM25 hard negative of the committed run
and against a random concept) sits beside the AUC of in-memory BM25 on the same pairs and texts.

    python case-studies/benchmark_rrf/train_concept_reader.py
    python case-studies/benchmark_rrf/train_concept_reader.py --steps 5 --sets main --resamples 200 --out "$(mktemp -d)"
"""

from __future__ import annotations

import re
from pathlib import Path

from gabarito.core.methods import reading
from gabarito.core.runs import Qrels, Run
from gabarito.hashing import sha256_file
from gabarito.measure.readings import GRID, HOWS, lift_difference, raw_rows, reading_variants, row_against, stage_report
from gabarito.measure.readings import primary_holm as holm_across_folds
from gabarito.measure.readings import PRIMARY as READING_PRIMARY
from gabarito.retrieval.memory import BM25
from gabarito.retrieval.protocol import Queries
from gabarito.retrieval.rerank import CrossEncoderReranker
from gabarito.retrieval.rerank.memo import MemoReader
from gabarito.retrieval.rerank.recipe import FILTER_MODEL, NEGATIVE_DEPTH, weak_plan
from gabarito.retrieval.rerank.training import build_pairs, pair_scores, separability
from gabarito.retrieval.rerank.weak import PseudoQuery, split_pseudo_query, weak_pairs
from gabarito.study.readers import trained_model, training_arguments, training_config
from gabarito.study.runner import say, variant_main
from gabarito.study.spec import StudySpec
from studies.benchmark_rrf.findings import HEADLINE_MEASURES
from studies.benchmark_rrf.run_benchmark import GOLD_SETS, load_inputs

HERE = Path(__file__).resolve().parent
JUDGMENTS = HERE.parent / "judgments"

FIRST_STAGES = {"bm25": "bm25.trec", "vector": "vector.trec"}
NS = (10, 20, 50)
PRIMARY = READING_PRIMARY
MEASURES = HEADLINE_MEASURES
TESTED_ON = "nDCG@10"
REGIMES = ("gold", "graded")
SOURCES = {"name": "name", "first sentence": "sentence"}  # pseudo-query source -> id tag
READER_TEXT = "c.text(): name with spaces + ': ' + description"
PREFIX = "concepts:"


def add_arguments(ap):
    ap.add_argument("--sets", default=",".join(GOLD_SETS), help="gold sets to re-read, comma separated")
    training_arguments(ap)


def readable_name(name: str) -> str:
    """``Climate_Belief`` / ``ClimateBelief`` / ``CO2Emissions`` -> ``climate belief`` / ``co2 emissions``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name.replace("_", " "))
    return " ".join(spaced.lower().split())


def _drop_leading(text: str, words: str) -> str:
    """``text`` without a leading ``words`` (case, spacing and a plural ending ignored) and the
    punctuation after it."""
    pattern = r"\s+".join(re.escape(w) for w in words.split())
    m = re.match(rf"\s*{pattern}(?:e?s)?\b[\s:;,.\-]*", text, flags=re.IGNORECASE) if pattern else None
    return text[m.end():] if m else text


def nameless_text(concept) -> str:
    """The concept's indexed text without its leading name: ``c.text()`` without "name:", and
    without the name again when the description opens with it."""
    return _drop_leading(_drop_leading(concept.text(), concept.search_name), concept.search_name).strip()


def concept_pseudo_queries(concepts) -> list[PseudoQuery]:
    """Every concept's ``name`` pseudo-query, then the ``first sentence`` ones (concepts only)."""
    named = [PseudoQuery(c.name, readable_name(c.name), nameless_text(c), "name")
             for c in concepts if readable_name(c.name) and nameless_text(c)]
    sentences = []
    for c in concepts:
        got = split_pseudo_query(c.description)
        if got is not None:
            query, rest, _ = got
            sentences.append(PseudoQuery(c.name, query, _drop_leading(rest, c.search_name), "first sentence"))
    return named + sentences


def training_pairs(concepts, seed: int, encode) -> tuple[list, dict]:
    """The pseudo-query pairs and their counts per source: BM25 over ``c.text()`` gives the
    candidates, the negatives' texts are the concepts' texts without their names."""
    texts = {c.name: c.text() for c in concepts}
    documents = {c.name: nameless_text(c) for c in concepts}
    bm25 = BM25(texts)
    found = concept_pseudo_queries(concepts)
    pairs, counts = [], {}
    for source, tag in SOURCES.items():
        pseudo = [p for p in found if p.source == source]
        cands = {p.doc_id: [d for d, _ in bm25.search(p.query, NEGATIVE_DEPTH + 1)] for p in pseudo}
        got, n = weak_pairs(pseudo, documents, cands, weak_plan(seed), encode=encode, prefix=f"{PREFIX}{tag}:")
        pairs += got
        counts[source] = {**n, "examples": [{"pseudo_query": p.query, "positive": p.positive[:160], "doc_id": p.doc_id}
                                            for p in pseudo[:3]]}
    counts["concepts"] = len(concepts)
    return pairs, counts


def judgments_gold() -> dict:
    """The graded qrels' sha256, checked against the judgments study's frozen manifest."""
    return {rel: sha for rel, sha in StudySpec.load(JUDGMENTS / "study.json").verify_gold().items()
            if rel.startswith("qrels")}


def regime_qrels(key: str) -> dict:
    return {"gold": Qrels.from_trec(HERE / "runs" / f"qrels.{key}.txt"),
            "graded": Qrels.from_trec(JUDGMENTS / "qrels" / f"{key}.txt")}


def read_stage(ctx, stage: str, first: Run, queries: Queries, texts: dict, reader, qrels) -> tuple[dict, dict]:
    """One first stage of one set under one regime: scores, tests and the per-question nDCG@10."""
    variants, weights = reading_variants(first, queries, texts, reader, qrels, NS, seed=ctx.seed)
    runs = {stage: first, **variants}
    scored = stage_report(runs, qrels, stage, MEASURES, tested=TESTED_ON, resamples=ctx.resamples, seed=ctx.seed)
    nd = {k: scored.values(k, TESTED_ON) for k in runs}
    primary = str(reading(*PRIMARY))
    return {"report": scored.to_dict(per_query=False), "convex_weights": weights,
            f"per_query_{TESTED_ON}": {stage: nd[stage], primary: nd[primary]}}, nd


def evaluate_set(ctx, key: str, pairs, texts: dict, reader, firsts: dict) -> dict:
    """One gold set: each regime, each first stage and its readings, and the lesson."""
    queries = Queries([p.id for p in pairs], [p.question for p in pairs])
    out = {}
    for regime, qrels in regime_qrels(key).items():
        stages, nd = {}, {}
        for stage, full in firsts.items():
            first = Run({q: full.get(q, []) for q in queries.ids}, name=stage)
            with ctx.phase(f"second reading ({key}, {regime}, {stage})"):
                stages[stage], nd[stage] = read_stage(ctx, stage, first, queries, texts, reader, qrels)
        primary = reading(*PRIMARY)
        row = lift_difference(nd["bm25"]["bm25"], nd["bm25"][primary], nd["vector"]["vector"],
                              nd["vector"][primary], names=("bm25", "vector"), resamples=ctx.resamples,
                              seed=ctx.seed)
        out[regime] = {"first_stages": stages, "lesson": {"variant": primary, **row}}
    return out


def auc_beside_bm25(ctx, sets: dict, texts: dict, reader, bm25_run: Run) -> dict:
    """The reader's and BM25's AUC on gold pairs of every set (never trained on): per question the
    expected concept, one hard negative from the committed BM25 run's top 30 and one random concept;
    BM25 (in memory) scores the same texts the reader reads."""
    questions = {p.id: p.question for pairs in sets.values() for p in pairs}
    qrels = Qrels.single({p.id: p.gold for pairs in sets.values() for p in pairs})
    pairs = build_pairs(questions, texts, qrels, {q: bm25_run.ids(q) for q in questions}, weak_plan(ctx.seed))
    bm25 = BM25(texts)
    bm25_scores = bm25.score_pairs([(p.query, p.doc_id) for p in pairs])
    return {"pairs": len(pairs), "reader": separability(pairs, pair_scores(reader, pairs)),
            "bm25": separability(pairs, bm25_scores), "bm25_text": READER_TEXT}


def primary_holm(sets: dict) -> dict:
    """The primary comparison and the lesson across the sets, Holm-corrected, per regime. Fewer
    sets than the declared family (every gold set) are not that family: ``{"incomplete": {"sets",
    "declared"}, "rows": {set: {diff, ci, p}}}`` per regime, raw p and no Holm p."""
    if sorted(sets) != sorted(GOLD_SETS):
        key = reading(*PRIMARY)
        rows = {regime: {name: row_against(r[regime]["first_stages"]["bm25"]["report"], key, "bm25")
                         for name, r in sets.items()} for regime in REGIMES}
        return {regime: {"incomplete": {"sets": sorted(sets), "declared": list(GOLD_SETS)},
                         "rows": raw_rows(rows[regime])} for regime in REGIMES}
    views, set_of = {}, {}
    for key, r in sets.items():
        for regime in REGIMES:
            views[f"{key}/{regime}"] = {**r[regime], "recipe": regime}
            set_of[f"{key}/{regime}"] = key
    out = holm_across_folds(views)
    return {regime: {set_of[k]: v for k, v in rows.items()} for regime, rows in out.items()}


def parameters(ctx, keys: list[str], config, judgments_sha: dict) -> dict:
    a = ctx.args
    return {"sets": keys, "regimes": {"gold": "runs/qrels.<set>.txt (the expected concept, grade 1)",
                                      "graded": "../judgments/qrels/<set>.txt (grades 0/1/2; nDCG gain = grade)"},
            "judgments_qrels_sha256": judgments_sha, "ns": list(NS), "hows": list(HOWS), "grid": list(GRID),
            "primary": list(PRIMARY), "measures": list(MEASURES), "tested_on": TESTED_ON,
            "first_stages": {s: {"file": f"runs/{f}", "sha256": sha256_file(HERE / "runs" / f)}
                             for s, f in FIRST_STAGES.items()},
            "pseudo_queries": {"sources": list(SOURCES), "from": "the concepts only (names, descriptions)",
                               "positive": "the concept's text without its leading name (name) or the rest of "
                                           "the description (first sentence)"},
            "candidates": f"in-memory BM25 over c.text(), top {NEGATIVE_DEPTH}", "reader_text": READER_TEXT,
            "pair_plan": weak_plan(ctx.seed).__dict__, "filter_model": FILTER_MODEL,
            "steps_asked": a.steps, "training": config.__dict__}


def run(ctx) -> dict:
    from gabarito.retrieval.models.encoders import load_encoder

    a = ctx.args
    keys = [s.strip() for s in a.sets.split(",") if s.strip()]
    judgments_sha = judgments_gold()
    with ctx.phase("load"):
        concepts, corpus, sets = load_inputs(ctx)
        sets = {k: sets[k] for k in keys}
        firsts = {s: Run.from_trec(HERE / "runs" / f, name=s).cut(max(NS)) for s, f in FIRST_STAGES.items()}
    encoder = load_encoder(FILTER_MODEL, device=a.device)
    with ctx.phase("pseudo-queries"):
        pairs, counts = training_pairs(concepts, ctx.seed, encoder.encode)
    config = training_config(ctx, len(pairs))
    folder, record = trained_model(ctx, "concepts", pairs, config)
    reader = MemoReader(CrossEncoderReranker(folder, max_length=config.max_length, batch_size=32, device=a.device))
    texts = {c.name: c.text() for c in concepts}
    results = {key: evaluate_set(ctx, key, sets[key], texts, reader, firsts) for key in keys}
    with ctx.phase("AUC"):
        auc = auc_beside_bm25(ctx, sets, texts, reader, firsts["bm25"])
    say(f"concept_reader: {reader.pairs_scored} pairs read in {reader.seconds:.0f} s")
    engine = {"name": "sentence-transformers CrossEncoder (trained here)", "device": a.device or "cpu"}
    return {"weak_pairs": counts, "training": record, "reader": reader.provenance(), "sets": results,
            "primary": primary_holm(results), "auc": auc,
            "cost": {"pairs_read": reader.pairs_scored, "seconds": round(reader.seconds, 1)},
            "provenance": ctx.provenance(corpus=corpus, engine=engine,
                                         model={"reader": {**reader.provenance(), "base_model": config.base_model,
                                                           "trained_weights_sha256": record["weights_sha256"]},
                                                "false_negative_filter": encoder.provenance()},
                                         parameters=parameters(ctx, keys, config, judgments_sha))}


if __name__ == "__main__":
    variant_main(HERE, run, add_arguments, name="concept_reader", results="reader_concepts.json",
                 title="A cross-encoder taught by the ontology's own concepts, re-reading the flagship's first stages",
                 doc=__doc__)
