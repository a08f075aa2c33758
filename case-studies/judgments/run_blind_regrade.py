"""The blind regrade (packet 22) scored: agreement with the non-blind grades, and the headline on it.

    python case-studies/judgments/run_blind_regrade.py      # writes blind_regrade.json

A variant of the judgments study, run once ``blind_regrade.py import`` has frozen the blind grades
(``blind_grades.lock.json``, verified first; its files' sha256 recorded in the parameters).
Written:

* ``agreement`` (:func:`gabarito.measure.agreement.agreement_summary`, over the drawn pairs as
  drawn: stratified, not weighted): blind A against blind B, each against the non-blind assessor
  of its letter, min(A, B) and mean(A, B) (doubled, grades 0-4) blind against non-blind, and blind
  min(A, B) against the grade in use (the rule: adjudicator and gold override);
* ``overridden``: the blind grades of the pairs the gold override changed;
* ``sets`` and ``moved``: the headline as ``run_assessor_keys.py`` computes it
  (:func:`studies.judgments.run_assessor_keys.score_sets`), with the drawn pairs' A and B replaced
  by the blind A and B: the rule in use (unchanged), min(A, B) and mean(A, B).
"""

from __future__ import annotations

import json
from pathlib import Path

from gabarito.inputs.gold import verify_frozen
from gabarito.measure.agreement import GRADES, agreement_summary
from gabarito.study.runner import variant_main
from studies.judgments.blind_regrade import BLIND_DOC, GRADES_LOCK
from studies.judgments.keys import KEYS, grade, moved
from studies.judgments.run_assessor_keys import parameters, score_sets
from studies.judgments.run_judgments import load_inputs

HERE = Path(__file__).resolve().parent
RESULTS = "blind_regrade.json"
#: The pairs of the agreement blocks: ``(first, second, labels)``, each a function of a blind pair.
COMPARED = {
    "blind_a_b": (lambda p: p["a"], lambda p: p["b"], GRADES),
    "a_old_a": (lambda p: p["a"], lambda p: p["old_a"], GRADES),
    "b_old_b": (lambda p: p["b"], lambda p: p["old_b"], GRADES),
    "min_old_min": (lambda p: grade(p, "min"), lambda p: min(p["old_a"], p["old_b"]), GRADES),
    "mean_old_mean": (lambda p: grade(p, "mean"), lambda p: p["old_a"] + p["old_b"], tuple(range(2 * max(GRADES) + 1))),
    "min_rule": (lambda p: grade(p, "min"), lambda p: p["old_grade"], GRADES),
}


def agreements(ctx, pairs: list[dict]) -> dict:
    return {name: agreement_summary([f(p) for p in pairs], [g(p) for p in pairs], labels=labels,
                                    resamples=ctx.resamples, seed=ctx.seed)
            for name, (f, g, labels) in COMPARED.items()}


def overridden(pairs: list[dict]) -> dict:
    """The blind grades of the pairs the gold override changed: ``{"n", "min": {grade: count},
    "a", "b": {grade: count}}``."""
    mine = [p for p in pairs if p["overridden"]]
    count = lambda values: {str(g): sum(v == g for v in values) for g in GRADES}  # noqa: E731
    return {"n": len(mine), "min": count([grade(p, "min") for p in mine]),
            "a": count([p["a"] for p in mine]), "b": count([p["b"] for p in mine])}


def run(ctx) -> dict:
    with ctx.phase("load"):
        frozen = verify_frozen(GRADES_LOCK)
        blind = json.loads((HERE / BLIND_DOC).read_text(encoding="utf-8"))
        _, _, pairs, runs, flagship, members, expected, _ = load_inputs()
        regraded = dict(pairs)
        for p in blind["pairs"].values():
            regraded[p["judged_as"]] = {**pairs[p["judged_as"]], "a": p["a"], "b": p["b"]}
    drawn = list(blind["pairs"].values())
    with ctx.phase("score"):
        agree = {"all": agreements(ctx, drawn),
                 "packets_01_20": agreements(ctx, [p for p in drawn if p["round"] == "01-20"])}
        sets = score_sets(ctx, runs, regraded, members, expected)
    fp = flagship["provenance"]
    params = parameters(flagship, "the qrels' pairs (assessor_keys.json's), the drawn pairs' A and B replaced by "
                                  "the blind A and B of judgments_blind.json")
    return {
        "provenance": ctx.provenance(corpus=fp["corpus"], model=fp["model"], engine=fp["engine"],
                                     parameters={**params, "blind_grades_sha256": frozen}),
        "assessors": blind["assessors"], "blindness": blind["blindness"], "judged_on": blind["date"],
        "n_pairs": blind["n_pairs"], "agreement": agree, "overridden": overridden(drawn),
        "moved": {k: moved(regraded, k) for k in KEYS}, "sets": sets,
    }


if __name__ == "__main__":
    variant_main(HERE, run, name="judgments/blind_regrade", results=RESULTS,
                 title="The blind regrade of packets 01-20: agreement with the non-blind grades and the headline",
                 doc=__doc__)
