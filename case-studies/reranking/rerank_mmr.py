"""The MMR phase of the reranking study: diversity on overlapping chunks (``MMR_SPEC``).

The better dense first stage's top HEADLINE_N chunks are re-ordered by Maximal Marginal Relevance
(:func:`gabarito.retrieval.diversity.mmr`) at each lambda of LAMBDAS; the top 5 is then measured
at document level (a chunk of a relevant document) and at chunk level (a chunk holding the answer
phrase), with how much repeated text and how many distinct documents it holds.
"""

from __future__ import annotations

import numpy as np

from gabarito.inputs.segment import describe, segment
from gabarito.core.runs import Qrels
from gabarito.retrieval.diversity import distinct, mmr, repeated_text_fraction
from gabarito.retrieval.memory import ExactVectors
from gabarito.retrieval.protocol import VectorRetriever
from gabarito.retrieval.rerank import gains_and_losses
from studies.reranking.rerank_bench import HEADLINE_N, MMR_SPEC, Bench, chunk_gold, measures, ranks

LAMBDAS = (1.0, 0.9, 0.7, 0.5)
TOP = 5


def mmr_phase(bench: Bench) -> dict:
    """The ``mmr`` section of the results."""
    chunks = segment(bench.docs, MMR_SPEC, prefix_title=True)
    docs_by_id = bench.docs_by_id
    doc_of = {c.id: c.doc_id for c in chunks}
    body = {c.id: docs_by_id[c.doc_id].text[c.start:c.end] for c in chunks}
    encoder = bench.better_encoder
    vecs = bench.cache.encode(encoder, [c.text for c in chunks])
    row_of = {c.id: i for i, c in enumerate(chunks)}
    index = ExactVectors([c.id for c in chunks], vecs, model_id=encoder.model_id)
    candidates = VectorRetriever("mmr candidates", index.knn, encoder).search(bench.queries, HEADLINE_N)
    qvecs = bench.queries.vectors(encoder)
    tops: dict[float, dict[str, list[str]]] = {lam: {} for lam in LAMBDAS}
    for i, q in enumerate(bench.questions):
        cands = candidates.ids(q.id)
        for lam in LAMBDAS:
            tops[lam][q.id] = mmr(qvecs[i], vecs[[row_of[c] for c in cands]], cands, lam, k=HEADLINE_N)
    answerable = bench.answerable
    gold = chunk_gold(answerable, chunks, docs_by_id)
    of_relevant_docs = {q.id: [c.id for c in chunks if c.doc_id in q.relevant_ids] for q in answerable}
    levels = {"doc_level": of_relevant_docs, "chunk_level": gold}
    rows = [mmr_row(lam, {k: v[:TOP] for k, v in tops[lam].items()}, {k: v[:TOP] for k, v in tops[1.0].items()},
                    levels, body, doc_of, bench.questions) for lam in LAMBDAS]
    return {"segmentation": describe(MMR_SPEC), "n_chunks": len(chunks), "first_stage": bench.better,
            "candidates": HEADLINE_N, "rows": rows, "example": example(tops, answerable, body, doc_of, gold),
            "chunks_per_answer_mean": float(np.mean([len(v) for v in gold.values()]))}


def mmr_row(lam: float, top: dict, base: dict, levels: dict, body: dict, doc_of: dict, questions: list) -> dict:
    """One lambda: hit@3 and hit@5 at each level, what changed against lambda 1, diversity of the top 5."""
    doc_ranks, base_doc = ranks(top, levels["doc_level"]), ranks(base, levels["doc_level"])
    chunk_ranks, base_chunk = ranks(top, levels["chunk_level"]), ranks(base, levels["chunk_level"])
    at = {level: measures(top, Qrels.from_lists(gold), hits=(3, 5)) for level, gold in levels.items()}
    return {
        "lambda": lam,
        **{level: {"hit@3": m["hit@3"], "hit@5": m["hit@5"]} for level, m in at.items()},
        "vs_lambda_1": {
            "doc_hit@5": gains_and_losses(base_doc, doc_ranks, cutoff=5),
            "chunk_hit@5": gains_and_losses(base_chunk, chunk_ranks, cutoff=5),
            "chunk_hit@3": gains_and_losses(base_chunk, chunk_ranks, cutoff=3)},
        "repeated_text_fraction_top5": float(np.mean([
            repeated_text_fraction([body[c] for c in top[q.id]]) for q in questions])),
        "distinct_documents_top5": float(np.mean([distinct(doc_of[c] for c in top[q.id]) for q in questions])),
        "top5_changed_vs_lambda_1": sum(set(top[q.id]) != set(base[q.id]) for q in questions),
    }


def example(tops: dict, answerable: list, body: dict, doc_of: dict, gold: dict) -> dict | None:
    """The answerable question whose top 5 lost the most repeated text from lambda 1 to 0.5."""
    def show(cid: str, q) -> dict:
        return {"id": cid, "doc": doc_of[cid], "gold_chunk": cid in gold.get(q.id, []),
                "first_words": " ".join(body[cid].split()[:12])}

    found, best_drop = None, 0.0
    for q in answerable:
        before5, after5 = tops[1.0][q.id][:TOP], tops[0.5][q.id][:TOP]
        if set(before5) == set(after5):
            continue
        before = repeated_text_fraction([body[c] for c in before5])
        after = repeated_text_fraction([body[c] for c in after5])
        if found is None or before - after > best_drop:
            best_drop = before - after
            found = {"question": q.id, "query": q.query, "lambda": 0.5,
                     "repeated_text_fraction": {"before": before, "after": after},
                     "before": [show(c, q) for c in before5], "after": [show(c, q) for c in after5]}
    return found
