"""Judgment pools, TREC style: the union of every method's top results, blind to who found what.

:func:`build_pool` takes several runs of the same questions and returns, per question, the
deduplicated union of each run's first ``depth`` documents, shuffled by a seeded generator
(``random.Random(f"{seed}:{question id}")`` over the sorted union), so the order carries no trace
of the method or the rank that retrieved a document. The pool file written by :func:`write_pool`
holds only question ids, question texts and candidate ids; which method retrieved a candidate is
kept apart (:func:`pool_sources`) for the analysis, never shown to an assessor.

Known answers (TREC adds them to the pool): :func:`unpooled_answers` finds the expected documents
that no pool holds, and :func:`hide_known_answers` pools each one with a few already-judged
candidates of its question (decoys) in a seeded order, so an assessor cannot tell which candidate
is the known answer; which pairs are decoys is kept only in the key.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_json


def build_pool(runs: Mapping[str, Mapping[str, Sequence]], qids: Sequence[str], *, depth: int = 10,
               seed: int, known: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[str]]:
    """``{qid: [doc ids]}``: the union of each run's top ``depth`` (and of ``known``, each
    question's known answers, when given), in a seeded random order."""
    if depth < 1:
        raise GabaritoError(f"pool depth must be at least 1, not {depth}")
    if not runs:
        raise GabaritoError("a pool needs at least one run")
    pool = {}
    for q in qids:
        union = set((known or {}).get(q, ()))
        for run in runs.values():
            union.update(d if isinstance(d, str) else d[0] for d in list(run.get(q, []))[:depth])
        ordered = sorted(union)
        random.Random(f"{seed}:{q}").shuffle(ordered)
        pool[q] = ordered
    return pool


def pool_sources(runs: Mapping[str, Mapping[str, Sequence]], pool: Mapping[str, Sequence[str]], *,
                 depth: int = 10) -> dict[str, dict[str, list[str]]]:
    """``{qid: {doc: [methods whose top depth held it]}}`` (for analysis only, never for assessors)."""
    out = {}
    for q, docs in pool.items():
        tops = {m: {d if isinstance(d, str) else d[0] for d in list(run.get(q, []))[:depth]} for m, run in runs.items()}
        out[q] = {d: sorted(m for m, top in tops.items() if d in top) for d in docs}
    return out


def write_pool(path: str | Path, pool: Mapping[str, Sequence[str]], questions: Mapping[str, str], *,
               meta: Mapping) -> Path:
    """The assessors' pool file: ``{"meta", "questions": [{"id", "question", "candidates": [...]}]}``."""
    missing = [q for q in pool if q not in questions]
    if missing:
        raise GabaritoError(f"pool question {missing[0]!r} has no text")
    items = [{"id": q, "question": questions[q], "candidates": list(docs)} for q, docs in pool.items()]
    return atomic_write_json(path, {"meta": dict(meta), "questions": items})


def assessment_pairs(pool: Mapping[str, Sequence[str]], *, prefix: str = "",
                     start: int = 0) -> list[tuple[str, str, str]]:
    """``[(pair id, question id, doc id)]`` in pool order; pair ids are ``<prefix>NNNNN`` counters
    continuing after ``start``, so they say nothing about the method, the rank or the expected answer."""
    out = []
    for q, docs in pool.items():
        for d in docs:
            out.append((f"{prefix}{start + len(out) + 1:05d}", q, d))
    return out


def unpooled_answers(expected: Mapping[str, str], pool: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """``{qid: expected doc}`` for the questions whose expected document is not in their pool."""
    return {q: d for q, d in expected.items() if d not in set(pool.get(q, ()))}


def hide_known_answers(answers: Mapping[str, str], pool: Mapping[str, Sequence[str]],
                       grades: Mapping[str, Mapping[str, int]], *, decoys: int,
                       seed: int) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Each known answer pooled with ``decoys`` candidates of its question's judged pool.

    The first decoy is drawn from the question's candidates of highest grade (so the known answer
    is never the only plausible candidate), the others from the rest of its pool; the question's
    candidates are then shuffled and the questions too (``random.Random(f"known:{seed}:...")``).
    Returns ``({qid: candidates}, {qid: decoys})``; the second is for the key, never for an assessor.
    """
    if decoys < 1:
        raise GabaritoError(f"a known answer needs at least one decoy, not {decoys}")
    order = sorted(answers)
    random.Random(f"known:{seed}").shuffle(order)
    hidden, chosen = {}, {}
    for q in order:
        judged = [d for d in pool.get(q, ()) if d != answers[q]]
        if len(judged) < decoys:
            raise GabaritoError(f"question {q!r} has {len(judged)} judged candidate(s), fewer than {decoys} decoys")
        missing = [d for d in judged if d not in grades.get(q, {})]
        if missing:
            raise GabaritoError(f"question {q!r}: pooled candidate {missing[0]!r} has no grade")
        rng = random.Random(f"known:{seed}:{q}")
        top = max(grades[q][d] for d in judged)
        first = rng.choice(sorted(d for d in judged if grades[q][d] == top))
        rest = rng.sample(sorted(d for d in judged if d != first), decoys - 1)
        chosen[q] = [first, *rest]
        candidates = [answers[q], *chosen[q]]
        rng.shuffle(candidates)
        hidden[q] = candidates
    return hidden, chosen


def split_packets(pairs: Sequence[tuple[str, str, str]], max_pairs: int) -> list[list[tuple[str, str, str]]]:
    """Consecutive packets of at most ``max_pairs`` pairs that never split one question's pairs."""
    if max_pairs < 1:
        raise GabaritoError(f"a packet needs room for at least one pair, not {max_pairs}")
    packets, current = [], []
    for i, pair in enumerate(pairs):
        starts_question = i == 0 or pairs[i - 1][1] != pair[1]
        if current and starts_question and len(current) + _question_size(pairs, i) > max_pairs:
            packets.append(current)
            current = []
        current.append(pair)
    if current:
        packets.append(current)
    return packets


def _question_size(pairs: Sequence[tuple[str, str, str]], start: int) -> int:
    q, n = pairs[start][1], 0
    while start + n < len(pairs) and pairs[start + n][1] == q:
        n += 1
    return n


def grade_record(rec: object, out: dict[str, int], allowed: Sequence[int], path: Path, record: int) -> tuple[str, int]:
    """Check one ``{"pair", "grade"}`` record of an assessor's file against those read before it
    (``out``): an object with both keys, a pair not graded twice, a grade among ``allowed``.
    Returns ``(pair id, grade)``; a bad record is one line naming the file and the record."""
    if not isinstance(rec, dict) or "pair" not in rec or "grade" not in rec:
        raise GabaritoError("expected an object with 'pair' and 'grade'", path=path, record=record)
    pid, grade = str(rec["pair"]), rec["grade"]
    if pid in out:
        raise GabaritoError(f"pair {pid!r} graded twice", path=path, record=record)
    if isinstance(grade, bool) or grade not in allowed:
        raise GabaritoError(f"grade {grade!r} is not one of {list(allowed)}", path=path, record=record)
    return pid, int(grade)


def read_grades(path: str | Path, expected: Sequence[str], grades: Sequence[int] = (0, 1, 2)) -> dict[str, int]:
    """An assessor's answer file: a JSON list of ``{"pair", "grade"}``, one per expected pair id.
    A bad file is a one-line error naming the file and the record; nothing is returned half-read."""
    import json

    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GabaritoError("grades file not found", path=path) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GabaritoError(f"not a JSON list of grades ({exc})", path=path) from None
    if not isinstance(data, list):
        raise GabaritoError("expected a JSON list of {\"pair\", \"grade\"}", path=path)
    out: dict[str, int] = {}
    wanted = set(expected)
    for i, rec in enumerate(data, start=1):
        pid, grade = grade_record(rec, out, grades, path, i)
        if pid not in wanted:
            raise GabaritoError(f"unknown pair {pid!r}", path=path, record=i)
        out[pid] = grade
    missing = [p for p in expected if p not in out]
    if missing:
        raise GabaritoError(f"{len(missing)} pair(s) without a grade, first {missing[0]!r}", path=path)
    return out
