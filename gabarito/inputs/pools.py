"""Judgment pools, TREC style: the union of every method's top results, blind to who found what.

:func:`build_pool` takes several runs of the same questions and returns, per question, the
deduplicated union of each run's first ``depth`` documents, shuffled by a seeded generator
(``random.Random(f"{seed}:{question id}")`` over the sorted union), so the order carries no trace
of the method or the rank that retrieved a document. The pool file written by :func:`write_pool`
holds only question ids, question texts and candidate ids; which method retrieved a candidate is
kept apart (:func:`pool_sources`) for the analysis, never shown to an assessor.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_json


def build_pool(runs: Mapping[str, Mapping[str, Sequence]], qids: Sequence[str], *, depth: int = 10,
               seed: int) -> dict[str, list[str]]:
    """``{qid: [doc ids]}``: the union of each run's top ``depth``, in a seeded random order."""
    if depth < 1:
        raise GabaritoError(f"pool depth must be at least 1, not {depth}")
    if not runs:
        raise GabaritoError("a pool needs at least one run")
    pool = {}
    for q in qids:
        union = set()
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
