"""Reproducing a published table: the published rank of each question beside ours, and each
published metric against our interval.

A published run gives, per question and per method, the rank at which the method placed the
expected document (``None``: not in the published top ``cutoff``), and a table of mean metrics.
This module sets our run beside it, with no tolerance: a rank *agrees* only when it is exactly
the same (both absent from the top ``cutoff`` counts as agreement: both say "not found"), and a
published mean is *inside* our 95% interval when ``low <= published <= high``. Published means
are usually rounded (three decimals); :func:`metric_check` records the rounding it assumes and
counts a value inside when the interval meets the rounding bucket of the published number.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from gabarito.errors import GabaritoError

#: The published page's measure names -> ours.
PUBLISHED_MEASURES = {"Recall@1": "R@1", "Recall@3": "R@3", "Recall@5": "R@5", "Recall@10": "R@10",
                      "MRR": "RR@10", "nDCG@5": "nDCG@5", "nDCG@10": "nDCG@10"}


def _within(rank, cutoff: int):
    return rank if rank is not None and rank <= cutoff else None


def rank_agreement(published: Mapping[str, Mapping[str, int | None]], rows: Sequence[Mapping],
                   method_map: Mapping[str, str], *, cutoff: int = 10) -> dict:
    """Question-by-question comparison of published ranks with ours.

    ``published`` maps a question id to ``{published method: rank or None}``; ``rows`` are
    :func:`gabarito.measure.per_question.per_question` rows (``row[our method]["deep_rank"]``);
    ``method_map`` maps a published method name to ours (``{"rrf": "rrf@10"}``).

    Returns ``{"n", "cutoff", "agree": {published method: count}, "moved": {published method:
    {"better": n, "worse": n}}, "rows": [{"id", "gold", <published method>: {"published",
    "ours", "agrees"}}]}`` where "better" means our rank is closer to the top than the published one.
    """
    by_id = {r["id"]: r for r in rows}
    missing = sorted(set(published) - set(by_id))
    if missing:
        raise GabaritoError(f"no measured row for published question(s) {', '.join(missing[:5])}")
    agree = {m: 0 for m in method_map}
    moved = {m: {"better": 0, "worse": 0} for m in method_map}
    out = []
    for qid in sorted(published):
        row = by_id[qid]
        item = {"id": qid, "gold": row["gold"]}
        for pub, ours in method_map.items():
            if ours not in row:
                raise GabaritoError(f"no measured method {ours!r} for question {qid}")
            p = _within(published[qid].get(pub), cutoff)
            o = _within(row[ours]["deep_rank"], cutoff)
            same = p == o
            agree[pub] += same
            if not same:
                better = p is None or (o is not None and o < p)
                moved[pub]["better" if better else "worse"] += 1
            item[pub] = {"published": p, "ours": o, "agrees": same}
        out.append(item)
    return {"n": len(out), "cutoff": cutoff, "agree": agree, "moved": moved, "rows": out}


def metric_check(published: Mapping[str, Mapping[str, float]], metrics: Mapping[str, Mapping[str, float]],
                 ci: Mapping[str, Mapping[str, Sequence[float]]], method_map: Mapping[str, str], *,
                 measure_map: Mapping[str, str] = PUBLISHED_MEASURES, decimals: int = 3) -> list[dict]:
    """Each published mean beside ours and our 95% interval.

    Returns ``[{"method", "ours_method", "measure", "published", "ours", "ci95", "inside"}]`` in
    the published order. ``inside`` is True when the interval meets ``published ± half a unit of
    the last published decimal`` (a value published as 0.575 may be anything in [0.5745, 0.5755)).
    """
    half = 0.5 * 10 ** -decimals
    out = []
    for pub, ours in method_map.items():
        if pub not in published:
            raise GabaritoError(f"no published metrics for method {pub!r}")
        for name, value in published[pub].items():
            if name not in measure_map:
                raise GabaritoError(f"unknown published measure {name!r}")
            key = measure_map[name]
            lo, hi = ci[ours][key]
            out.append({"method": pub, "ours_method": ours, "measure": key, "published": value,
                        "ours": metrics[ours][key], "ci95": [lo, hi],
                        "inside": lo <= value + half and value - half <= hi})
    return out


def reproduction(published_ranks, published_metrics, rows, metrics, ci, method_map, *, cutoff: int = 10) -> dict:
    """:func:`rank_agreement` and :func:`metric_check` together, with the counts a page leads with."""
    ranks = rank_agreement(published_ranks, rows, method_map, cutoff=cutoff)
    checks = metric_check(published_metrics, metrics, ci, method_map)
    return {"methods": dict(method_map), "ranks": ranks, "metrics": checks,
            "inside": sum(c["inside"] for c in checks), "n_metrics": len(checks)}
