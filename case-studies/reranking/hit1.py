"""The first-place hits of the reranking chapter's headline as Reports: per (first stage, reader),
the hit@1 of every answerable question before and after the second reading of the top N, scored
by the one scorer (:func:`gabarito.measure.score.report_from_values`, the reading tested against
its first stage: the paired difference with its bootstrap interval, the randomization p and the
exact sign test on the questions it gained and lost). ``run_rerank.py`` stores them (its
``statistics``, ``hit1_intervals``); the page reads them through :func:`hit1_intervals`."""

from __future__ import annotations

from collections.abc import Mapping

from gabarito.core.methods import reread
from gabarito.core.page_guard import stored
from gabarito.measure.families import Against
from gabarito.measure.report import Report
from gabarito.measure.score import report_from_values

#: The measure the headline counts: the gold passage in first place.
HIT1 = "hit@1"


def compute_hit1_reports(res: Mapping) -> list[dict]:
    """Per row of the headline, in its order: ``{"first_stage", "reader", "N", "reading", "report"}``,
    the Report of the first stage and its reading (``reading``: the reread method's key) on hit@1,
    read from each answerable question's gold rank before and after (``per_question``)."""
    out = []
    for h in res["headline"]:
        stage, reader, n = h["first_stage"], h["reader"], int(h["N"])
        ranks = res["per_question"][stage][reader]
        reading = str(reread(reader, stage, n))
        values = {stage: {HIT1: {q: float(r[0] == 1) for q, r in ranks.items()}},
                  reading: {HIT1: {q: float(r[1] == 1) for q, r in ranks.items()}}}
        report = report_from_values(values, [HIT1], family=Against(stage))
        out.append({"first_stage": stage, "reader": reader, "N": n, "reading": reading, "report": report.to_dict()})
    return out


def hit1_intervals(res: Mapping) -> list[dict]:
    """Per (first stage, reader) of the headline, from the Reports the study stored: ``n``, the
    first-place hits ``before`` and ``after`` with their 95% intervals (``ci_before``,
    ``ci_after``) and the paired difference after minus before (``diff``, ``ci_diff``)."""
    out = []
    for block in stored(res, "hit1_intervals"):
        report, stage, reading = Report.from_dict(block["report"]), block["first_stage"], block["reading"]
        c = report.compare(reading, stage, HIT1)
        out.append({"first_stage": stage, "reader": block["reader"], "n": report.n,
                    "before": report.mean(stage, HIT1), "after": report.mean(reading, HIT1), "diff": c.diff,
                    "ci_before": list(report.interval(stage, HIT1)), "ci_after": list(report.interval(reading, HIT1)),
                    "ci_diff": list(c.ci)})
    return out
