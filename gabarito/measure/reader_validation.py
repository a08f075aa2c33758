"""The checkpoint's validation of a reader being trained (:mod:`gabarito.retrieval.rerank.resumable`).

:func:`validation` returns the function the trainer calls at each checkpoint: on validation
questions only (:func:`gabarito.retrieval.rerank.recipe.split_validation`), nDCG@10 of the reader
fused with the first stage (RRF of the top ``n``; its value is what a checkpoint is chosen by), of
the reader's order alone and of the first stage, and the AUC of positives against hard and random
negatives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gabarito.core.methods import reading
from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError
from gabarito.measure.metrics import evaluate
from gabarito.retrieval.pipeline import SecondReading, fuse_reading
from gabarito.retrieval.protocol import Queries
from gabarito.retrieval.rerank.recipe import Source, per_positive
from gabarito.retrieval.rerank.training import build_pairs, pair_scores, separability


def validation(sources: Sequence[Source], *, n: int = 20, seed: int = 0, measure: str = "nDCG@10",
               auc_positives: int = 2) -> Callable:
    """The checkpoint's validation on ``sources`` (validation questions only): returns
    ``validate(reader) -> dict`` with ``select`` (mean over all validation questions of
    ``measure`` of RRF of the reader and the first stage over the top ``n``), the same for the
    reader's order alone (``replace``) and for the first stage, and the AUC of positives against
    each kind of negative on fixed pairs (one hard and one random per positive, up to
    ``auc_positives`` positives per question)."""
    if not sources:
        raise GabaritoError("validation needs at least one collection")
    fixed = [build_pairs(s.queries, s.texts, s.qrels, s.candidates, per_positive(seed, positives=auc_positives),
                         exclude=s.exclude, prefix=f"{s.name}:") for s in sources]

    def per_question(runs: dict[str, Run], qrels: Qrels) -> dict[str, list[float]]:
        return {k: list(evaluate(r, qrels, [measure])[measure].values()) for k, r in runs.items()}

    def validate(reader) -> dict:
        pooled: dict[str, list[float]] = {"rrf": [], "replace": [], "first": []}
        for s in sources:
            qids = sorted(s.queries)
            first = Run({q: [(d, -i) for i, d in enumerate(list(s.candidates.get(q, []))[:n])] for q in qids})
            read = SecondReading(reader, s.texts, n=n)(Queries(qids, [s.queries[q] for q in qids]), first)
            runs = {"rrf": fuse_reading(first, read, n, how="rrf"), "replace": fuse_reading(first, read, n, how="replace"),
                    "first": first}
            qrels = Qrels({q: {d: g for d, g in s.qrels[q].items() if d not in s.exclude.get(q, set())} for q in qids})
            for k, values in per_question(runs, qrels).items():
                pooled[k] += values
        pairs = [p for chunk in fixed for p in chunk]
        scores = pair_scores(reader, pairs)
        means = {k: sum(v) / len(v) for k, v in pooled.items()}
        keys = point_keys(n, measure)
        return {"select": means["rrf"], **{keys[k]: means[k] for k in keys}, "questions": len(pooled["rrf"]),
                "auc": separability(pairs, scores)["auc"]}

    return validate


def point_keys(n: int, measure: str = "nDCG@10") -> dict[str, str]:
    """The keys of a validation point's means (:func:`validation`): the fused reading (``rrf``),
    the reader's order alone (``replace``) and the first stage (``first``), each over the top ``n``."""
    return {"rrf": f"{measure} {reading('rrf', n)}", "replace": f"{measure} {reading('replace', n)}",
            "first": f"{measure} first stage"}
