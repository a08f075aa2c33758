"""What a page states about evaluation runs, from their per-question rows: numbers and choices,
no sentences.

Both the site's evaluate chapter (``studies.helpcenter.findings``, for its chosen configuration) and
the page every run writes (:mod:`gabarito.publish.run_page`, :mod:`gabarito.publish.compare_page`)
read these, so the spreadsheet, the errors by type and severity, the top scores of the questions
with and without an answer, the "no answer" thresholds and the questions that changed between two
runs are computed in one place. A *row* is one element of a run record's ``per_query``
(:mod:`gabarito.evaluation.rows`). Each choice rule is a constant below, stated once.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from gabarito.measure import metrics, thresholds

#: How many returned documents a spreadsheet row shows.
SHOWN = 3
#: The threshold table's points: quantiles of the distinct top scores.
QUANTILES = (0.25, 0.5, 0.75, 0.9)
#: The validated threshold lets through at most this share of the unanswerable questions.
MAX_THROUGH = 0.2
#: The seed of the two halves the threshold is chosen on and checked on.
THRESHOLD_SEED = 20261202
#: The hit accuracies a spreadsheet row carries (top 1, 3, 5).
HITS = (1, 3, 5)


def first_rank(row: Mapping) -> int | None:
    """The rank of the first expected document among the row's returned ones (None: none there,
    or an unanswerable question), by :func:`gabarito.measure.metrics.first_relevant_rank`."""
    if not row["answerable"]:
        return None
    return metrics.first_relevant_rank([x["id"] for x in row["returned"]], set(row["expected"]))


def spreadsheet(rows: Sequence[Mapping], shown: int | None = SHOWN) -> list[dict]:
    """One row per question: ``id``, ``query``, ``type``, ``severity``, ``answerable``, ``hits``
    (``{1, 3, 5}`` -> True/False/None), ``rr``, ``measures`` (the run's other measures, name ->
    value or None), ``rank`` (:func:`first_rank`), ``false_positive``, ``expected`` and the first
    ``shown`` (all when None) ``returned`` as (id, score)."""
    return [{"id": r["id"], "query": r["query"], "type": r["type"], "severity": r["severity"],
             "answerable": r["answerable"], "hits": {k: r.get(f"hit@{k}") for k in HITS}, "rr": r["rr"],
             "measures": dict(r.get("measures") or {}),
             "rank": first_rank(r), "false_positive": r["false_positive"], "expected": list(r["expected"]),
             "returned": [(x["id"], x["score"]) for x in r["returned"][:shown]]} for r in rows]


def error_rows(rows: Sequence[Mapping], key: str, order: Sequence[str]) -> list[dict]:
    """The rows grouped by ``key`` (``type`` or ``severity``) in ``order``: answerable questions,
    top-1 and top-5 accuracy, top-1 misses. Groups with no answerable question are left out."""
    out = []
    for k in order:
        g = [r for r in rows if r[key] == k and r["answerable"]]
        if g:
            top5 = [r["hit@5"] for r in g]
            out.append({key: k, "n": len(g), "top1": sum(r["hit@1"] for r in g) / len(g),
                        "top5": None if None in top5 else sum(top5) / len(g),
                        "misses": sum(not r["hit@1"] for r in g)})
    return out


def groups_in(rows: Sequence[Mapping], key: str, known: Sequence[str] = ()) -> list[str]:
    """The values of ``key`` among the rows: those of ``known`` first (in its order), then the
    others in the order they first appear."""
    seen = list(dict.fromkeys(r[key] for r in rows))
    return [k for k in known if k in seen] + [k for k in seen if k not in known]


def top_scores(rows: Sequence[Mapping]) -> dict:
    """The top score of the answerable and of the unanswerable questions (questions with no
    result left out)."""
    return {"answerable": [r["top_score"] for r in rows if r["answerable"] and r["top_score"] is not None],
            "unanswerable": [r["top_score"] for r in rows if not r["answerable"] and r["top_score"] is not None]}


def threshold_rows(rows: Sequence[Mapping], quantiles: Sequence[float] = QUANTILES) -> list[dict]:
    """What thresholds at ``quantiles`` of the rows' distinct top scores keep and let through
    (:func:`gabarito.measure.thresholds.outcome`), lowest first; empty when no row has a score."""
    cands = thresholds.candidate_thresholds(rows)
    if not cands:
        return []
    picked = [cands[min(len(cands) - 1, int(q * len(cands)))] for q in quantiles]
    return [thresholds.outcome(rows, t) for t in picked]


def validated_threshold(rows: Sequence[Mapping], *, seed: int = THRESHOLD_SEED,
                        max_through: float = MAX_THROUGH) -> dict:
    """The lowest threshold letting through at most ``max_through`` of the unanswerable
    questions, chosen on one half of the rows and checked on the other
    (:func:`gabarito.measure.thresholds.chosen_and_validated`)."""
    return thresholds.chosen_and_validated(rows, seed=seed, max_through=max_through)


def has_unanswerable(rows: Sequence[Mapping]) -> bool:
    """Whether any question has no answer in the documents (a threshold can then be chosen)."""
    return any(not r["answerable"] for r in rows)


def changed_questions(base: Mapping, other: Mapping) -> list[dict]:
    """The answerable questions whose outcome changed from the run record ``base`` to ``other``,
    in the baseline's order: ``change`` is ``gained`` (missed at top 1, now hit), ``lost`` (the
    reverse) or ``moved`` (the first expected document at another rank); each with ``id``,
    ``query``, ``expected``, both ranks (:func:`first_rank`) and both top documents."""
    theirs = {r["id"]: r for r in other["per_query"]}
    out = []
    for a in base["per_query"]:
        b = theirs.get(a["id"])
        if b is None or not a["answerable"]:
            continue
        rank_a, rank_b = first_rank(a), first_rank(b)
        if a["hit@1"] != b["hit@1"]:
            change = "gained" if b["hit@1"] else "lost"
        elif rank_a != rank_b:
            change = "moved"
        else:
            continue
        out.append({"id": a["id"], "query": a["query"], "expected": list(a["expected"]), "change": change,
                    "rank_a": rank_a, "rank_b": rank_b,
                    "top_a": a["returned"][0]["id"] if a["returned"] else None,
                    "top_b": b["returned"][0]["id"] if b["returned"] else None})
    return out
