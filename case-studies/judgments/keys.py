"""Judgment keys: one grade per pair, from the grades the two assessors gave, under a named rule.

* ``rule`` -- the rule in use (the frozen qrels): the agreed grade, else the adjudicator's, and the
  expected concept kept at 2 unless every assessor gave it 0;
* ``min`` -- the lower of A's and B's grades, for every pair: no adjudicator, no gold override;
* ``mean`` -- the mean of A's and B's grades, for every pair: no adjudicator, no gold override.
  Its grades are halves; they are stored doubled (``A + B``, :data:`SCALE`), which leaves nDCG
  unchanged (every gain and the ideal gain scale alike), so the key is scored on nDCG only
  (:data:`MEAN_MEASURES`): Recall and MRR need a yes/no relevance that a mean does not give.

The same keys serve the first round (packets 01-20 with their assessors) and the blind regrade
(:mod:`studies.judgments.blind_regrade`): a pair is ``{"question", "doc", "a", "b", "grade"}``.
"""

from __future__ import annotations

from typing import Mapping

from gabarito.errors import GabaritoError
from gabarito.measure.judgments import graded_qrels
from gabarito.core.runs import Qrels

KEYS = ("rule", "min", "mean")
#: The factor the ``mean`` key's grades are stored under (whole numbers: ``A + B``).
SCALE = {"rule": 1, "min": 1, "mean": 2}
#: What the ``mean`` key is scored on (a gain, not a yes/no relevance).
MEAN_MEASURES = ("nDCG@10",)


def grade(p: Mapping, key: str) -> int:
    """One pair's grade under ``key`` (the ``mean`` key's doubled)."""
    if key == "rule":
        return int(p["grade"])
    if key == "min":
        return min(int(p["a"]), int(p["b"]))
    if key == "mean":
        return int(p["a"]) + int(p["b"])
    raise GabaritoError(f"unknown judgment key {key!r}; use one of {list(KEYS)}")


def keyed(pairs: Mapping[str, Mapping], key: str) -> dict[str, dict]:
    """The pairs with each grade replaced by its grade under ``key``."""
    return {pid: {**p, "grade": grade(p, key)} for pid, p in pairs.items()}


def key_qrels(pairs: Mapping[str, Mapping], key: str, questions: list[str]) -> Qrels:
    """Qrels of ``questions`` under ``key`` (every grade kept, 0 included)."""
    return graded_qrels(keyed(pairs, key), questions)


def full(qrels: Qrels, key: str) -> Qrels:
    """Only the full answers (grade 2, both assessors' 2 under ``mean``) relevant."""
    return qrels.at_least(2 * SCALE[key])


def moved(pairs: Mapping[str, Mapping], key: str) -> dict[str, int]:
    """How many pairs the key grades otherwise than the rule in use: ``{"n", "lower", "higher",
    "expected"}`` (``expected``: of them, the expected concepts, which the rule keeps at 2), on
    the key's own scale brought back to grades."""
    out = {"n": 0, "lower": 0, "higher": 0, "expected": 0}
    for p in pairs.values():
        g = grade(p, key) / SCALE[key]
        if g != p["grade"]:
            out["n"] += 1
            out["lower" if g < p["grade"] else "higher"] += 1
            out["expected"] += bool(p.get("expected"))
    return out
