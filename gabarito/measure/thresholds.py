"""Score thresholds for "no answer": what a cut-off keeps and what it lets through.

Given, per query, the best score the search returned, whether the query is answerable, and
whether that best result was right, a threshold ``t`` answers only when ``top_score >= t``.
It then keeps some useful answers (answerable, top-1 right, score >= t), loses others, and
lets some unanswerable queries through (score >= t: the user gets a wrong answer instead of
"not found").

:func:`separation_auc` says how well such a score tells answerable queries from unanswerable ones
at all, whatever the threshold.
"""

from __future__ import annotations

import random
from typing import Mapping, Sequence

import numpy as np

from gabarito.errors import GabaritoError


def outcome(rows: Sequence[Mapping], t: float) -> dict:
    """Counts and shares at threshold ``t`` over rows with ``top_score``, ``answerable``, ``hit@1``."""
    useful = [r for r in rows if r["answerable"] and r.get("hit@1")]
    wrong = [r for r in rows if r["answerable"] and not r.get("hit@1")]
    unans = [r for r in rows if not r["answerable"]]

    def above(group):
        return sum(r["top_score"] is not None and r["top_score"] >= t for r in group)

    kept, wrong_kept, through = above(useful), above(wrong), above(unans)
    return {
        "threshold": t,
        "useful_kept": kept, "useful_total": len(useful),
        "useful_kept_share": kept / len(useful) if useful else None,
        "wrong_answered": wrong_kept, "wrong_total": len(wrong),
        "unanswerable_through": through, "unanswerable_total": len(unans),
        "unanswerable_through_share": through / len(unans) if unans else None,
    }


def candidate_thresholds(rows: Sequence[Mapping]) -> list[float]:
    """Every distinct top score (a threshold between two of them behaves like the higher one)."""
    return sorted({float(r["top_score"]) for r in rows if r["top_score"] is not None})


def choose(rows: Sequence[Mapping], *, max_through: float = 0.1) -> dict:
    """The lowest threshold letting through at most ``max_through`` of the unanswerable queries
    (so it keeps the most useful answers under that constraint)."""
    for t in candidate_thresholds(rows):
        o = outcome(rows, t)
        if o["unanswerable_through_share"] is None or o["unanswerable_through_share"] <= max_through:
            return o
    return outcome(rows, float("inf"))


def split_halves(rows: Sequence[Mapping], seed: int) -> tuple[list, list]:
    """Two halves with the answerable/unanswerable mix kept (seeded, reproducible)."""
    rng = random.Random(seed)
    a, b = [], []
    for flag in (True, False):
        group = [r for r in rows if bool(r["answerable"]) == flag]
        group = sorted(group, key=lambda r: str(r["id"]))
        rng.shuffle(group)
        a += group[: len(group) // 2]
        b += group[len(group) // 2:]
    return a, b


def chosen_and_validated(rows: Sequence[Mapping], *, seed: int, max_through: float = 0.1) -> dict:
    """Choose the threshold on one half, report what it does on the other."""
    first, second = split_halves(rows, seed)
    picked = choose(first, max_through=max_through)
    return {"seed": seed, "max_through": max_through, "chosen_on_first_half": picked,
            "on_second_half": outcome(second, picked["threshold"])}


def separation_auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(a positive score > a negative one), ties counting one half (the ROC AUC, Mann-Whitney U).

    1.0: every answerable query's best score is above every unanswerable one's; 0.5: no
    separation at all."""
    pos, neg = np.asarray(positive, dtype=np.float64), np.asarray(negative, dtype=np.float64)
    if pos.size == 0 or neg.size == 0:
        raise GabaritoError("separation_auc needs at least one score on each side")
    if not (np.all(np.isfinite(pos)) and np.all(np.isfinite(neg))):
        raise GabaritoError("separation_auc got a NaN or infinite score")
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (pos.size * neg.size))
