"""Choosing a parameter on some questions and scoring it on others; tests against one baseline.

A fusion weight chosen on the questions it is then scored on reports an optimistic number. The
functions here keep the two apart:

* :func:`split_halves` -- a fixed-seed split of the query ids into two halves (the ids are
  sorted first, so the split does not depend on the order they come in);
* :func:`tuning_curve` -- the mean of one measure for each value of a grid, on a set of queries;
* :func:`choose` -- the best value of a curve, ties broken towards a preferred value;
* :func:`cross_fit` -- two-fold cross-fitting: the value chosen on half A answers the queries of
  half B and the reverse, so every query is answered by a value chosen *without* it, and the
  resulting run can be scored on all queries like any other;
* :func:`against_baseline` -- paired tests of several methods against one baseline, Holm-corrected
  over those comparisons only (not over every pair of methods): the family
  :class:`gabarito.measure.families.Against`.
"""

from __future__ import annotations

import random
from typing import Callable, Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.measure import metrics
from gabarito.measure.families import Against, paired_tests
from gabarito.core.runs import Qrels, Run
from gabarito.measure.stats import ALPHA


def split_halves(ids: Sequence[str], seed: int) -> tuple[list[str], list[str]]:
    """Two halves of ``ids`` (sorted, shuffled with ``seed``, cut in the middle; each half sorted).
    With an odd count the first half has one id fewer."""
    pool = sorted(set(str(i) for i in ids))
    if len(pool) < 2:
        raise GabaritoError(f"cannot split {len(pool)} queries into two halves")
    random.Random(seed).shuffle(pool)
    cut = len(pool) // 2
    return sorted(pool[:cut]), sorted(pool[cut:])


def _subset(qrels: Mapping, ids: Sequence[str]) -> Qrels:
    return Qrels({q: qrels[q] for q in ids if q in qrels})


def tuning_curve(runs: Mapping[float, Run], qrels: Mapping, ids: Sequence[str], measure: str) -> list[dict]:
    """``[{"value", "score"}]``: the mean ``measure`` over ``ids`` of the run made with each value."""
    sub = _subset(qrels, ids)
    if not sub.judged():
        raise GabaritoError("no judged query to tune on")
    return [{"value": float(v), "score": metrics.mean(metrics.evaluate(run, sub, [measure])[measure])}
            for v, run in runs.items()]


def choose(curve: Sequence[Mapping], prefer: float = 0.5) -> float:
    """The value with the highest score; among equal scores the one nearest ``prefer``, then the smaller."""
    if not curve:
        raise GabaritoError("an empty tuning curve has nothing to choose")
    best = max(p["score"] for p in curve)
    tied = [p["value"] for p in curve if p["score"] == best]
    return min(tied, key=lambda v: (round(abs(v - prefer), 12), v))  # rounded: 0.3 and 0.7 are equally near 0.5


def cross_fit(make_run: Callable[[float], Run], grid: Sequence[float], qrels: Mapping, measure: str, seed: int,
              *, prefer: float = 0.5, name: str = "") -> dict:
    """Two-fold cross-fitting of one parameter over the judged queries of ``qrels``.

    Returns ``{"folds": [{"tuned_on", "scored_on", "curve", "chosen"}, ...], "run": Run, "curve_all"}``;
    the run holds, for each query of a half, the list made with the value chosen on the other half.
    ``curve_all`` is the curve over every judged query: a description of how much the parameter
    matters, never used to choose it."""
    if not grid:
        raise GabaritoError("an empty grid has nothing to tune")
    runs = {float(v): make_run(float(v)) for v in grid}
    judged = Qrels(qrels).judged()
    halves = split_halves(judged, seed)
    folds, out = [], {}
    for tuned_on, scored_on in (halves, halves[::-1]):
        curve = tuning_curve(runs, qrels, tuned_on, measure)
        chosen = choose(curve, prefer)
        folds.append({"tuned_on": tuned_on, "scored_on": scored_on, "curve": curve, "chosen": chosen})
        out.update({q: runs[chosen].get(q, []) for q in scored_on})
    return {"folds": folds, "run": Run(out, name=name), "grid": [float(v) for v in grid], "measure": measure,
            "seed": seed, "curve_all": tuning_curve(runs, qrels, judged, measure)}


def against_baseline(per_query: Mapping[str, Mapping[str, float]], baseline: str, *, resamples: int,
                     seed: int, alpha: float = ALPHA) -> list[dict]:
    """Each method against ``baseline`` on the same queries (rows of
    :func:`gabarito.measure.stats.compare_methods` with ``a`` the method, ``b`` the baseline), the
    randomization p-values Holm-corrected over these comparisons only: the tests of one measure
    under the family :class:`gabarito.measure.families.Against` (what ``score_runs(...,
    family=Against(baseline))`` stores)."""
    return paired_tests({"": per_query}, Against(baseline), resamples=resamples, seed=seed, alpha=alpha)[""]
