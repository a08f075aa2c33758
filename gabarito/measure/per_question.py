"""Per-question tables of a study: where each method put each question's answer.

A *row* is ``{"id", "question", "gold", <method>: {"rank", "deep_rank", "top"}}``: ``rank`` is the
gold's rank within the reported cutoff (None beyond it), ``deep_rank`` its rank anywhere in the
retrieved list, ``top`` the first documents returned. Ranks come from
:func:`gabarito.measure.metrics.rank_of` (ties by doc id, as everywhere).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from gabarito.inputs.gold import Pair
from gabarito.measure import metrics

Run = metrics.Run


def gold_ranks(run: Run, pairs: Sequence[Pair], cutoff: int | None = None) -> dict[str, int | None]:
    """Rank of each question's gold document (None when absent or beyond ``cutoff``)."""
    out = {}
    for p in pairs:
        r = metrics.rank_of(run.get(p.id, []), p.gold)
        out[p.id] = r if r is not None and (cutoff is None or r <= cutoff) else None
    return out


def per_question(pairs: Sequence[Pair], runs: Mapping[str, Run], *, cutoff: int = 10,
                 top: int = 3) -> list[dict]:
    """One row per question: for each method the gold's rank (within ``cutoff`` and overall)
    and the top ``top`` documents returned."""
    rows = []
    for p in pairs:
        row = {"id": p.id, "question": p.question, "gold": p.gold}
        for method, run in runs.items():
            ids = metrics.as_ranking(run.get(p.id, []))
            rank = metrics.rank_of(ids, p.gold)
            row[method] = {
                "rank": rank if rank is not None and rank <= cutoff else None,
                "deep_rank": rank,
                "top": ids[:top],
            }
        rows.append(row)
    return rows


def lost_by_fusion(rows: Sequence[Mapping], fused: str, inputs: Sequence[str]) -> list[dict]:
    """Questions whose gold was in some input's top cutoff but not in the fused top cutoff."""
    lost = []
    for r in rows:
        if r[fused]["rank"] is None and any(r[m]["rank"] is not None for m in inputs):
            lost.append({"id": r["id"], "gold": r["gold"], "fused_deep_rank": r[fused]["deep_rank"],
                         **{m: r[m]["rank"] for m in inputs}})
    return lost


def top1_overlap(rows: Sequence[Mapping], a: str, b: str) -> dict[str, int]:
    ranks_a = {r["id"]: r[a]["rank"] for r in rows}
    ranks_b = {r["id"]: r[b]["rank"] for r in rows}
    return metrics.top1_overlap(ranks_a, ranks_b)
