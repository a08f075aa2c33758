"""The judgments' headline under the assessors' own grades: no gold override, no adjudicator.

    python case-studies/judgments/run_assessor_keys.py      # writes assessor_keys.json

A variant of the judgments study (``study.json`` ``variants``: same gold, seed and resamples). The
flagship's committed runs are scored, per gold set, exactly as ``run_judgments.py`` scores them
(:func:`studies.judgments.run_judgments.score`), under three judgment keys
(:mod:`studies.judgments.keys`): the rule in use (the frozen qrels, checked), ``min(A, B)`` and
``mean(A, B)``, each over every pair of the qrels (packets 01-20 with their assessors, packet
21's known answers with theirs). Written per set: the single-answer gold's scores (the order the
headline compares with) and each key's graded scores (``mean``: nDCG@10 only) and full-answer
scores; per key, how many pairs it grades otherwise than the rule in use.
"""

from __future__ import annotations

from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.study.runner import variant_main
from studies.judgments.keys import KEYS, MEAN_MEASURES, SCALE, full, key_qrels, moved
from studies.judgments.run_judgments import CUTOFF, MEASURES, RUNS, SETS, load_inputs, runs_record, score
from gabarito.core.runs import Qrels

HERE = Path(__file__).resolve().parent
RESULTS = "assessor_keys.json"
KEY_TEXT = {"rule": "the rule in use: agreed grade, else the adjudicator's; the expected concept keeps 2 unless "
                    "every assessor gave 0 (the frozen qrels)",
            "min": "min(A, B) for every pair: no adjudicator, no gold override",
            "mean": "mean(A, B) for every pair: no adjudicator, no gold override; stored as A + B (nDCG unchanged), "
                    "scored on nDCG@10 only"}


def measures_of(key: str) -> tuple[str, ...]:
    return MEAN_MEASURES if key == "mean" else MEASURES


def score_key(ctx, runs: dict, pairs: dict, key: str, name: str, qids: list[str]) -> dict:
    """One key's graded and full-answer scores of one set's questions (the rule's checked against
    the set's frozen qrels)."""
    q, wanted = key_qrels(pairs, key, qids), set(qids)
    if key == "rule" and q != Qrels.from_trec(HERE / "qrels" / f"{name}.txt"):
        raise GabaritoError("the frozen qrels are not the rule's grades of judgments.json", path=HERE / "qrels")
    return {"graded": score(ctx, runs, q, measures_of(key)), "full": score(ctx, runs, full(q, key), measures_of(key)),
            "moved": moved({pid: p for pid, p in pairs.items() if p["question"] in wanted}, key)}


def score_sets(ctx, runs: dict, pairs: dict, members: dict, expected: dict) -> dict:
    """Per gold set: its single-answer scores and each key's (:func:`score_key`)."""
    sets = {}
    for s in SETS:
        qids = members[s]
        single = Qrels.single({q: expected[q] for q in qids})
        sets[s] = {"n_questions": len(qids), "single": score(ctx, runs, single),
                   "keys": {k: score_key(ctx, runs, pairs, k, s, qids) for k in KEYS}}
    return sets


def parameters(flagship: dict, pairs: str) -> dict:
    return {"cutoff": CUTOFF, "measures": list(MEASURES), "methods": list(RUNS), "keys": KEY_TEXT, "scale": SCALE,
            "pairs": pairs, **runs_record(flagship)}


def run(ctx) -> dict:
    with ctx.phase("load"):
        _, _, pairs, runs, flagship, members, expected, _ = load_inputs()
    with ctx.phase("score"):
        sets = score_sets(ctx, runs, pairs, members, expected)
    fp = flagship["provenance"]
    return {
        "provenance": ctx.provenance(
            corpus=fp["corpus"], model=fp["model"], engine=fp["engine"],
            parameters=parameters(flagship, "packets 01-20 (judgments.json) and packet 21's known answers "
                                            "(judgments_known.json), each with its own round's assessors A and B")),
        "n_pairs": len(pairs),
        "moved": {k: moved(pairs, k) for k in KEYS},
        "sets": sets,
    }


if __name__ == "__main__":
    variant_main(HERE, run, name="judgments/assessor_keys", results=RESULTS,
                 title="The judgments' headline under the assessors' own grades (min and mean of A and B)",
                 doc=__doc__)
