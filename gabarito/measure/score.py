"""The one scorer: runs + qrels + measure names -> per-query values, means, intervals, tests.

Every study, ``gabarito evaluate`` and ``gabarito compare`` score through here, so that a mean,
an interval and a p-value are computed in exactly one way:

* per-query values come from :func:`gabarito.measure.metrics.evaluate` (conventions there);
* intervals are percentile bootstrap intervals of the mean over queries
  (:func:`gabarito.measure.stats.bootstrap_ci`; all the series of one call in one shared draw,
  :func:`gabarito.measure.stats.bootstrap_ci_many`);
* paired tests between methods are :func:`gabarito.measure.stats.compare_methods`
  (sign-flip randomization + exact sign test), Holm-corrected over a comparison family given as a
  parameter (:mod:`gabarito.measure.families`): every pair of methods of a measure
  (:class:`~gabarito.measure.families.AllPairs`, the default; every measure's pairs at once through
  :func:`gabarito.measure.stats.compare_tables`) or each method against one baseline
  (:class:`~gabarito.measure.families.Against`). The report records its family.

The seed defaults to :data:`gabarito.measure.stats.DEFAULT_SEED`; the result records the seed
and the number of resamples actually used, so a results file says how it was computed.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from gabarito.core.measures import parse_measures
from gabarito.errors import GabaritoError
from gabarito.measure import metrics, stats
from gabarito.measure.families import AllPairs, Family, paired_tests
from gabarito.measure.report import Report

DEFAULT_RESAMPLES = 10000
#: The fewest and the most resamples a command takes (``--resamples`` of ``gabarito study`` and
#: ``gabarito judgments import``): fewer give no 95% interval worth the name, more only run for hours.
MIN_RESAMPLES, MAX_RESAMPLES = 100, 1_000_000


def check_resamples(resamples: int) -> None:
    """Refuse, in one line, a ``--resamples`` outside :data:`MIN_RESAMPLES` .. :data:`MAX_RESAMPLES`."""
    if not MIN_RESAMPLES <= resamples <= MAX_RESAMPLES:
        raise GabaritoError(f"--resamples must be at least {MIN_RESAMPLES} (for a 95% interval) and at most "
                            f"{MAX_RESAMPLES:,}, not {resamples}")


def interval(values: Sequence[float], *, resamples: int = DEFAULT_RESAMPLES,
             seed: int = stats.DEFAULT_SEED) -> dict | None:
    """``{"value": mean, "ci95": [low, high]}`` of per-query values in the order given
    (None for no value: nothing to average)."""
    return intervals([values], resamples=resamples, seed=seed)[0]


def intervals(series: Sequence[Sequence[float]], *, resamples: int = DEFAULT_RESAMPLES,
              seed: int = stats.DEFAULT_SEED) -> list[dict | None]:
    """:func:`interval` of each series, in order; the series of one length share one bootstrap
    draw (:func:`gabarito.measure.stats.bootstrap_ci_many`), which gives the same numbers."""
    series = [[float(v) for v in values] for values in series]
    out: list[dict | None] = [None] * len(series)
    for size in sorted({len(values) for values in series} - {0}):
        group = [i for i, values in enumerate(series) if len(values) == size]
        cis = stats.bootstrap_ci_many([series[i] for i in group], n_resamples=resamples, seed=seed)
        for i, (low, high) in zip(group, cis):
            out[i] = {"value": metrics.mean(series[i]), "ci95": [low, high]}
    return out


def per_query_values(runs: Mapping[str, metrics.Run], qrels: metrics.Qrels,
                     measures: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
    """``{method: {measure: {qid: value}}}`` for every judged query of ``qrels``."""
    out = {}
    for method, run in runs.items():
        out[method] = {m: dict(v) for m, v in metrics.evaluate(run, qrels, measures).items()}
    return out


def score_runs(runs: Mapping[str, metrics.Run], qrels: metrics.Qrels, measures: Sequence[str], *,
               tested: Sequence[str] | None = None, resamples: int = DEFAULT_RESAMPLES,
               seed: int = stats.DEFAULT_SEED, order: Sequence[str] | None = None,
               family: Family = AllPairs()) -> Report:
    """Score several runs on the same qrels: the :class:`~gabarito.measure.report.Report` of
    their means, intervals, per-query values and paired tests.

    ``tested`` limits the paired tests to some measures (default: all); ``order`` fixes the query
    order the bootstrap resamples (default: sorted query ids), so a caller reproducing an
    earlier computation can keep its own; ``family`` says which pairs are tested and what their
    Holm p is corrected over (:mod:`gabarito.measure.families`).
    """
    if not runs:
        raise GabaritoError("nothing to score: no run given")
    measures = parse_measures(measures)
    return report_from_values(per_query_values(runs, qrels, measures), measures, tested=tested, resamples=resamples,
                              seed=seed, order=order, family=family)


def report_from_values(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], measures: Sequence[str], *,
                       tested: Sequence[str] | None = None, resamples: int = DEFAULT_RESAMPLES,
                       seed: int = stats.DEFAULT_SEED, order: Sequence[str] | None = None,
                       family: Family = AllPairs()) -> Report:
    """The :class:`~gabarito.measure.report.Report` of per-query values already computed
    (``{method: {measure: {qid: value}}}``, in the methods' order): what :func:`score_runs` makes
    after evaluating its runs, and the same numbers for the same values, seed and order (so a
    results file that kept its per-query values can be given its report without searching again)."""
    measures = list(measures)
    runs = list(per_query)
    if not runs:
        raise GabaritoError("nothing to score: no method given")
    judged = sorted(next(iter(per_query.values()))[measures[0]])
    qids = list(order) if order is not None else judged
    if sorted(qids) != judged:
        raise GabaritoError("the query order given does not cover exactly the judged queries")
    means = {m: {meas: metrics.mean([per_query[m][meas][q] for q in qids]) for meas in measures}
             for m in runs}
    cells = [(m, meas) for m in runs for meas in measures]
    cis = stats.bootstrap_ci_many([[per_query[m][meas][q] for q in qids] for m, meas in cells],
                                  n_resamples=resamples, seed=seed)
    ci: dict[str, dict[str, list[float]]] = {m: {} for m in runs}
    for (m, meas), low_high in zip(cells, cis):
        ci[m][meas] = list(low_high)
    tests = []
    if len(runs) >= 2:
        tables = {meas: {m: [per_query[m][meas][q] for q in qids] for m in runs}
                  for meas in (measures if tested is None else tested)}
        for meas, rows in paired_tests(tables, family, resamples=resamples, seed=seed).items():
            tests.extend({"measure": meas, **row} for row in rows)
    return Report(metrics=means, ci=ci, tests=tuple(tests), per_query=per_query, n=len(qids),
                  queries=tuple(qids), measures=tuple(measures), seed=seed, resamples=resamples,
                  family=family)
