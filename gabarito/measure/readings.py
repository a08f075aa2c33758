"""A second reading measured three ways against the first stage it re-reads.

* :func:`reading_variants` -- for each N, the reader's order of the top N (``replace@N``), RRF of
  the reader's and the first stage's orders (``rrf@N``), and a convex combination of their
  normalized scores whose weight is chosen on the other half of the questions (``convex@N``,
  two-fold cross-fitting by :func:`gabarito.measure.tuning.cross_fit`);
* :func:`stage_report` -- a first stage and its readings scored by the one scorer, each reading
  tested against the stage (the family :class:`~gabarito.measure.families.Against`): the
  :class:`~gabarito.measure.report.Report` a study stores per first stage (:func:`row_against` reads
  one test back);
* :func:`lift_difference` -- does a reading lift one first stage more than another? The paired
  difference, per question, of the two lifts (a row of :func:`gabarito.measure.stats.compare_methods`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gabarito.core.methods import READING_JOINS, Method, reading
from gabarito.core.runs import Run
from gabarito.errors import GabaritoError
from gabarito.measure import stats
from gabarito.measure.families import Across, Against, across
from gabarito.measure.report import Report, as_report
from gabarito.measure.score import score_runs
from gabarito.measure.tuning import cross_fit
from gabarito.retrieval.pipeline import SecondReading, fuse_reading
from gabarito.retrieval.protocol import Queries

GRID = tuple(round(0.1 * i, 1) for i in range(11))
#: The ways a reading is fused with its first stage, and the declared primary one (RRF over the top 20).
HOWS = READING_JOINS
PRIMARY = ("rrf", 20)


def readings_at(ns: Sequence[int], hows: Sequence[str] = HOWS) -> list[Method]:
    """The readings a study runs at depths ``ns``: what a key of its results is found among
    (:func:`gabarito.core.methods.among`)."""
    return [reading(how, n) for n in ns for how in hows]


def reading_variants(first: Run, queries: Queries, texts: Mapping[str, str], reader, qrels: Mapping,
                     ns: Sequence[int], *, seed: int, grid: Sequence[float] = GRID,
                     measure: str = "nDCG@10") -> tuple[dict[str, Run], dict[str, list[float]]]:
    """``({"replace@N" | "rrf@N" | "convex@N": Run}, {"N": [weight chosen on each half]})``.

    The reader scores each (question, document) pair once when it is memoized
    (:class:`gabarito.retrieval.rerank.memo.MemoReader`): every N reads the pairs of the largest."""
    runs, chosen = {}, {}
    for n in ns:
        read = SecondReading(reader, texts, n=n)(queries, first)
        runs[reading("replace", n)] = fuse_reading(first, read, n, how="replace")
        runs[reading("rrf", n)] = fuse_reading(first, read, n, how="rrf")
        fit = cross_fit(lambda w: fuse_reading(first, read, n, how="convex", weight=w), grid, qrels, measure,
                        seed, prefer=0.5, name=reading("convex", n))
        runs[reading("convex", n)] = fit["run"]
        chosen[str(n)] = [f["chosen"] for f in fit["folds"]]
    return runs, chosen


def stage_report(runs: Mapping[str, Run], qrels: Mapping, stage: str, measures: Sequence[str], *,
                 tested: str = "nDCG@10", resamples: int, seed: int) -> Report:
    """``runs`` (the first stage ``stage`` and its readings) scored on ``measures``; each reading
    tested against ``stage`` on ``tested`` alone, Holm over the stage's readings
    (``Against(stage)``). Stored with ``to_dict(per_query=False)`` beside the run's hash."""
    return score_runs(runs, qrels, measures, tested=[tested], resamples=resamples, seed=seed,
                      family=Against(stage))


def row_against(block: Report | Mapping, key: str | Method, stage: str, measure: str = "nDCG@10") -> dict:
    """The stored test row of reading ``key`` against first stage ``stage`` in a stage's Report
    (a row of :func:`gabarito.measure.stats.compare_methods`: ``mean_diff``, ``ci_low``,
    ``ci_high``, ``p_randomization``, ``p_holm`` over the stage's readings), as
    :func:`holm_over` takes it."""
    report = as_report(block)
    for row in report.tests:
        if row["measure"] == measure and row["a"] == str(key) and row["b"] == str(stage):
            return dict(row)
    raise GabaritoError(f"the report holds no test of {key!r} against {stage!r} on {measure!r}")


def lift_difference(before_a: Mapping[str, float], after_a: Mapping[str, float], before_b: Mapping[str, float],
                    after_b: Mapping[str, float], *, names: tuple[str, str] = ("a", "b"), resamples: int,
                    seed: int) -> dict:
    """Per question, ``(after_a - before_a) - (after_b - before_b)`` tested as a paired difference of
    the two lifts, on the questions all four hold: the row of ``compare_methods`` (``mean_diff``,
    ``ci_low``, ``ci_high``, ``p_randomization``, wins and losses of ``a``'s lift)."""
    common = sorted(set(before_a) & set(after_a) & set(before_b) & set(after_b))
    lift_a = {q: after_a[q] - before_a[q] for q in common}
    lift_b = {q: after_b[q] - before_b[q] for q in common}
    return stats.compare_methods({names[0]: lift_a, names[1]: lift_b}, n_resamples=resamples, seed=seed)[0]


def raw_rows(rows: Mapping[str, Mapping]) -> dict:
    """``{name: test row}`` (rows of ``compare_methods``) as ``{name: {diff, ci, p}}``, uncorrected:
    what a run holding only part of a declared family reports (no Holm p exists for it)."""
    return {k: {"diff": r["mean_diff"], "ci": [r["ci_low"], r["ci_high"]], "p": r["p_randomization"]}
            for k, r in rows.items()}


def holm_over(rows: Mapping[str, Mapping], name: str = "rows") -> dict:
    """``{name: test row}`` (rows of ``compare_methods``) as ``{name: {diff, ci, p, p_holm}}``, the
    randomization p-values Holm-corrected over these rows: the family
    :class:`gabarito.measure.families.Across` whose members are exactly ``rows``' keys."""
    p_holm = across(Across(name, tuple(rows)), rows)
    return {k: {**row, "p_holm": p_holm[k]} for k, row in raw_rows(rows).items()}


def primary_families(results: Mapping[str, Mapping], primary: tuple[str, int] = PRIMARY) -> dict[str, dict]:
    """The families :func:`primary_holm` corrects over, one per recipe (``{recipe: {"reading",
    "lesson"}}``, each an :class:`~gabarito.measure.families.Across` of the folds), as written."""
    how, n = primary
    out = {}
    for recipe in sorted({r["recipe"] for r in results.values()}):
        folds = tuple(k for k, r in results.items() if r["recipe"] == recipe)
        out[recipe] = {"reading": Across(f"{how}@{n} against bm25, nDCG@10, {recipe}", folds).to_dict(),
                       "lesson": Across(f"lesson of {how}@{n}, {recipe}", folds).to_dict()}
    return out


def primary_holm(results: Mapping[str, Mapping], primary: tuple[str, int] = PRIMARY) -> dict:
    """The primary reading against BM25 across folds, Holm-corrected per recipe, beside the lesson
    (its lift over BM25 minus its lift over the dense first stage), also Holm-corrected: the
    families of :func:`primary_families`.

    ``results`` maps a fold to its record: ``recipe``, ``first_stages.bm25.report`` (a
    :func:`stage_report`) and ``lesson`` (a row of :func:`lift_difference`)."""
    how, n = primary
    out = {}
    for recipe, fams in primary_families(results, primary).items():
        folds = fams["reading"]["members"]
        fuse = holm_over({k: row_against(results[k]["first_stages"]["bm25"]["report"], reading(how, n), "bm25")
                          for k in folds}, fams["reading"]["name"])
        lesson = holm_over({k: results[k]["lesson"] for k in folds}, fams["lesson"]["name"])
        out[recipe] = {k: {**fuse[k], "lesson_diff": lesson[k]["diff"], "lesson_ci": lesson[k]["ci"],
                           "lesson_p_holm": lesson[k]["p_holm"]} for k in fuse}
    return out
