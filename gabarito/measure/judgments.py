"""From assessors' grades to graded qrels, and what the single-answer gold misses.

Two assessors grade every pooled (question, document) pair 0 / 1 / 2; a third grades only the
pairs where they disagree, without seeing their grades. :func:`combine` turns that into one
grade per pair:

* the two assessors agree: their grade;
* they disagree: the third assessor's grade (the adjudication);
* the document is the question's *expected* one (the single-answer gold): grade 2, unless every
  assessor who graded it gave 0 -- those cases are kept and counted as questions the gold may
  have got wrong (``gold_rejected``), and then the pair takes the adjudicated grade.

:func:`acceptable_misses` counts, for a method, the questions whose first result is not the
expected document but was judged an acceptable (>= 1) or full (2) answer.

Adjudication regimes (:func:`under_regime`): the same pairs with the disagreements resolved by
the adjudicator (``adjudicated``, the frozen qrels), by the lower of the two grades (``min``) or by
the higher (``max``); the expected concept's rule applies in all three. :func:`resolutions` counts
how the adjudicator resolved each kind of disagreement: with the higher grade, the lower, or one
in between.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.core.runs import Qrels


def combine(a: Mapping[str, int], b: Mapping[str, int], c: Mapping[str, int],
            key: Mapping[str, Mapping[str, str]], expected: Mapping[str, str]) -> dict:
    """One grade per pair: ``{"pairs": {pair: {"question", "doc", "a", "b", "c", "grade",
    "expected", "rule"}}, "gold_rejected": [pair ids], "n_disagreements"}``.

    ``a``/``b``/``c`` map pair ids to grades (``c`` only for disagreements), ``key`` maps a pair
    id to ``{"question", "concept"}``, ``expected`` maps a question id to its expected document.
    ``rule`` says how the grade was decided: ``agreed``, ``adjudicated``, ``expected kept at 2``
    or ``expected rejected by every assessor``.
    """
    if set(a) != set(key) or set(b) != set(key):
        raise GabaritoError("both assessors must grade every pair of the key")
    out, rejected, n_dis = {}, [], 0
    for pid, k in key.items():
        q, d = k["question"], k["concept"]
        ga, gb = a[pid], b[pid]
        gc = None
        if ga != gb:
            n_dis += 1
            if pid not in c:
                raise GabaritoError(f"pair {pid} has no adjudication (assessors gave {ga} and {gb})")
            gc = c[pid]
            grade, rule = gc, "adjudicated"
        else:
            grade, rule = ga, "agreed"
        is_expected = expected.get(q) == d
        if is_expected:
            given = [g for g in (ga, gb, gc) if g is not None]
            if all(g == 0 for g in given):
                rejected.append(pid)
                rule = "expected rejected by every assessor"
            elif grade != 2:
                grade, rule = 2, "expected kept at 2"
        out[pid] = {"question": q, "doc": d, "a": ga, "b": gb, "c": gc, "grade": grade,
                    "expected": is_expected, "rule": rule}
    return {"pairs": out, "gold_rejected": rejected, "n_disagreements": n_dis}


ADJUDICATION_REGIMES = ("adjudicated", "min", "max")
_PICK = {"min": min, "max": max}


def under_regime(pairs: Mapping[str, Mapping], regime: str) -> dict[str, dict]:
    """:func:`combine`'s pairs with each disagreement resolved by ``regime``: ``adjudicated`` (the
    adjudicator's grade, as combined), ``min`` or ``max`` of the two assessors' grades. Agreed
    pairs keep their grade; the expected concept keeps its combined grade (2 unless every assessor
    gave 0, which needs the two to agree on 0), whatever the regime."""
    if regime not in ADJUDICATION_REGIMES:
        raise GabaritoError(f"unknown adjudication regime {regime!r}; use one of {list(ADJUDICATION_REGIMES)}")
    out = {}
    for pid, p in pairs.items():
        grade = p["grade"]
        if regime != "adjudicated" and p["a"] != p["b"] and not p["expected"]:
            grade = _PICK[regime](p["a"], p["b"])
        out[pid] = {**p, "grade": grade}
    return out


def resolutions(pairs: Mapping[str, Mapping]) -> dict:
    """How the adjudicator resolved the disagreements: ``{"n", "higher", "lower", "between",
    "outside", "by_kind": {"0-1"|"0-2"|"1-2": {same counts}}}`` (kind = the two grades, lower
    first; ``outside``: neither grade, e.g. 2 where A and B gave 0 and 1). Counts the
    adjudicator's own grade, before the expected concept's rule."""
    def zero() -> dict:
        return {"n": 0, "higher": 0, "lower": 0, "between": 0, "outside": 0}

    total, kinds = zero(), {}
    for pid, p in pairs.items():
        if p["a"] == p["b"]:
            continue
        if p.get("c") is None:
            raise GabaritoError(f"pair {pid} has no adjudication (assessors gave {p['a']} and {p['b']})")
        low, high = sorted((p["a"], p["b"]))
        c = p["c"]
        way = "higher" if c == high else "lower" if c == low else "between" if low < c < high else "outside"
        kind = kinds.setdefault(f"{low}-{high}", zero())
        for counts in (total, kind):
            counts["n"] += 1
            counts[way] += 1
    return {**total, "by_kind": dict(sorted(kinds.items()))}


def graded_qrels(pairs: Mapping[str, Mapping], questions: Sequence[str]) -> Qrels:
    """Qrels of ``questions`` from :func:`combine`'s pairs (every grade kept, 0 included)."""
    wanted = set(questions)
    judgments: dict[str, dict[str, int]] = {q: {} for q in questions}
    for p in pairs.values():
        if p["question"] in wanted:
            judgments[p["question"]][p["doc"]] = int(p["grade"])
    return Qrels(judgments)


def acceptable_misses(run: Mapping[str, Sequence], expected: Mapping[str, str], qrels: Qrels) -> dict:
    """Questions whose first result is not the expected document: how many, and how many of those
    first results were judged >= 1 and == 2 (unjudged first results are counted apart)."""
    from gabarito.measure.metrics import as_ranking

    misses, partly, fully, unjudged = [], 0, 0, 0
    for q, gold in expected.items():
        top = as_ranking(run.get(q, []))[:1]
        if not top or top[0] == gold:
            continue
        grade = qrels.get(q, {}).get(top[0])
        misses.append({"question": q, "first": top[0], "grade": grade})
        if grade is None:
            unjudged += 1
        elif grade >= 1:
            partly += 1
            fully += grade == 2
    return {"n_questions": len(expected), "misses": len(misses), "acceptable": partly, "full_answers": fully,
            "unjudged": unjudged, "rows": misses}
