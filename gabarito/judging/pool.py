"""Blind judgment pools from a user's runs, written once and frozen before anyone judges.

A pool file (schema ``gabarito.pool/1``) is JSON::

    {"schema", "kind": "pool" | "adjudication", "meta": {...},
     "questions": [{"id", "text", "candidates": [{"pair", "doc", "title", "text"}]}]}

Per question, the candidates are the union of each run's first ``depth`` documents and the
question's known answers, deduplicated and shuffled by a seeded generator
(:func:`gabarito.inputs.pools.build_pool`); the questions are shuffled too, and each pair gets a
counter id (``P00001``...). Nothing in the file says which run found a candidate, at which rank or
score, or which candidate is a known answer: ``meta`` holds only the depth, the seed, how many runs
were pooled, whether known answers were added, counts, the date and the inputs' sha256.

:func:`write_pool` refuses to replace an existing pool and writes ``<name>.lock.json`` beside it
(:func:`gabarito.inputs.gold.freeze`), the two placed together or not at all
(:mod:`gabarito.judging.staging`); :func:`read_pool` verifies that manifest before returning
the pool and its sha256, the key the judging page and the grades files carry, and names a pool
modified after it was frozen, or one left without its manifest.
"""

from __future__ import annotations

import datetime as _dt
import random
from pathlib import Path
from typing import Mapping, Sequence

from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError
from gabarito.files import read_json
from gabarito.hashing import sha256_file
from gabarito.inputs.gold import verify_frozen
from gabarito.inputs.items import Document
from gabarito.inputs.pools import assessment_pairs, build_pool
from gabarito.judging.staging import Stage, staging
from gabarito.progress import bar as progress_bar

SCHEMA = "gabarito.pool/1"
KINDS = ("pool", "adjudication")


def lock_path(pool_path: str | Path) -> Path:
    """The freeze manifest beside a pool file: ``pool.json`` -> ``pool.lock.json``."""
    p = Path(pool_path)
    return p.with_name(f"{p.stem}.lock.json")


def _is_run_file(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    return len(line.split()) == 6
    except (OSError, UnicodeDecodeError):
        return False
    return False


def read_run(path: str | Path) -> Run:
    """A TREC run file, or a folder (``gabarito evaluate``'s output) holding exactly one."""
    path = Path(path)
    if path.is_dir():
        found = [p for p in sorted(path.glob("*.trec")) if _is_run_file(p)]
        if len(found) != 1:
            raise GabaritoError(f"expected one TREC run file (*.trec, six columns) in the folder, "
                                f"found {len(found)}", path=path)
        path = found[0]
    if not path.exists():
        raise GabaritoError("run file not found", path=path)
    run = Run.from_trec(path, name=str(path))
    if not run:
        raise GabaritoError("the run file holds no ranking", path=path)
    return run


def question_texts(path: str | Path, documents: Sequence[Document]) -> dict[str, str]:
    """``{question id: text}`` from an evaluation file (JSON list or BEIR folder, as ``gabarito
    evaluate`` reads them) or TREC topics (``<top><num>..<title>..``)."""
    from gabarito.inputs.documents import load_evaluation

    path = Path(path)
    if path.is_file() and "<top>" in path.read_text(encoding="utf-8", errors="replace")[:4096].lower():
        from gabarito.inputs.collections.trec import parse_trec_topics

        return {num: title for _, num, title in parse_trec_topics(path.read_text(encoding="utf-8"), str(path))}
    return {q.id: q.query for q in load_evaluation(path, documents)}


def known_answers(path: str | Path, documents: Sequence[Document]) -> dict[str, list[str]]:
    """``{question id: [doc ids]}``: the relevant documents of an evaluation file (JSON list or
    BEIR folder) or of TREC qrels (grade >= 1); an id not in the documents is an error."""
    from gabarito.inputs.documents import load_evaluation

    path = Path(path)
    ids = {d.id for d in documents}
    if path.is_dir() or path.suffix.lower() in (".json", ".jsonl"):
        answers = {q.id: list(q.relevant_ids) for q in load_evaluation(path, documents)}
    else:
        qrels = Qrels.from_trec(path)
        answers = {q: sorted(qrels.relevant(q)) for q in qrels}
        for q, docs in answers.items():
            unknown = [d for d in docs if d not in ids]
            if unknown:
                raise GabaritoError(f"document {unknown[0]!r} of question {q!r} is not in the documents", path=path)
    return {q: docs for q, docs in answers.items() if docs}


def keep_evaluated(runs: Mapping[str, Run], questions: Mapping[str, str],
                   known: Mapping[str, Sequence[str]] | None = None
                   ) -> tuple[dict[str, Run], dict[str, list[str]] | None, list[str]]:
    """The runs and known answers cut to the evaluation's questions, and the ids left out (sorted):
    runs made on more questions than the evaluation holds pool only the evaluated ones. Refuses
    when no question of the runs is in the evaluation."""
    kept = {where: Run({q: r for q, r in run.items() if q in questions}, name=run.name) for where, run in runs.items()}
    left = {q for run in runs.values() for q in run if q not in questions}
    left |= {q for q in known or {} if q not in questions}
    if not any(kept.values()):
        asked = sorted({q for run in runs.values() for q in run})
        raise GabaritoError(f"none of the runs' {len(asked)} questions (e.g. {asked[0]!r}) is in the evaluation: "
                            f"pass the evaluation file the runs were made on (--evaluation)")
    kept_known = {q: list(d) for q, d in known.items() if q in questions} if known is not None else None
    return kept, kept_known, sorted(left)


def make_pool(runs: Mapping[str, Run], documents: Sequence[Document], questions: Mapping[str, str], *,
              depth: int, seed: int, known: Mapping[str, Sequence[str]] | None = None,
              inputs: Mapping[str, str] | None = None) -> dict:
    """The pool document (not yet written). ``runs`` maps each run's file name to its run (used
    only in error messages); ``inputs`` adds sha256 entries to ``meta``."""
    docs = {d.id: d for d in documents}
    with progress_bar(total=sum(len(run) for run in runs.values()), desc="pooling", unit="list") as bar:
        for where, run in runs.items():
            for q, ranking in run.items():
                if q not in questions:
                    raise GabaritoError(f"question {q!r} is not in the evaluation", path=where)
                for doc, _ in ranking[:depth]:
                    if doc not in docs:
                        raise GabaritoError(f"question {q!r}: document {doc!r} is not in the documents", path=where)
            bar.update(len(run))
    for q in known or {}:
        if q not in questions:
            raise GabaritoError(f"known answers name question {q!r}, which is not in the evaluation")
    qids = sorted(q for q in questions if any(run.get(q) for run in runs.values()) or (known or {}).get(q))
    if not qids:
        raise GabaritoError("no question of the evaluation has a ranking in the runs")
    random.Random(f"{seed}:questions").shuffle(qids)
    candidates = build_pool(dict(enumerate(runs.values())), qids, depth=depth, seed=seed, known=known)
    by_question: dict[str, list[dict]] = {q: [] for q in qids}
    for pid, q, d in assessment_pairs(candidates, prefix="P"):
        by_question[q].append({"pair": pid, "doc": d, "title": docs[d].title, "text": docs[d].text})
    items = [{"id": q, "text": questions[q], "candidates": by_question[q]} for q in qids if by_question[q]]
    meta = {"depth": depth, "seed": seed, "n_runs": len(runs), "known_answers_added": bool(known),
            "n_questions": len(items), "n_pairs": sum(len(i["candidates"]) for i in items),
            "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), **(inputs or {})}
    return {"schema": SCHEMA, "kind": "pool", "meta": meta, "questions": items}


def check_new(path: str | Path) -> None:
    """Refuse to write a pool at ``path`` when it, or its manifest, is there (a frozen pool is never
    rewritten; a pool left without its manifest by an interrupted command is named as such)."""
    path = Path(path)
    if path.is_dir():
        raise GabaritoError("is a folder: --out names the pool file to write (e.g. pool.json)", path=path)
    _check_pair(path)
    for target in (path, lock_path(path)):
        if target.exists():
            raise GabaritoError("already exists; a frozen pool is never rewritten: choose another --out", path=target)


def _check_pair(path: Path) -> None:
    """A pool without its manifest, or a manifest without its pool: what an interrupted command
    of an earlier version could leave. Nobody can have judged such a pool (the page refuses it)."""
    lock = lock_path(path)
    if path.is_file() and not lock.exists():
        raise GabaritoError(f"was never frozen (no {lock.name} beside it: the command that wrote it was stopped "
                            f"before freezing it); nobody can have judged it: delete it and run that command "
                            f"again", path=path)
    if lock.exists() and not path.exists():
        raise GabaritoError(f"pool file not found, but its freeze manifest {lock.name} is there (the command that "
                            f"wrote them was stopped): delete {lock.name} and run that command again", path=path)


def stage_pool(stage: Stage, name: str, pool: Mapping, note: str) -> list[str]:
    """Write ``pool`` as ``name`` and its freeze manifest into ``stage``; returns both names, in
    the order :meth:`Stage.place` must put them (the manifest last)."""
    lock = lock_path(name).name
    stage.write_json(name, pool)
    stage.freeze(lock, [name], note)
    return [name, lock]


def write_pool(path: str | Path, pool: Mapping, *, note: str = "pool frozen before any grade") -> str:
    """Write ``pool`` and freeze it in its ``.lock.json``, both or neither (:mod:`~gabarito.judging.staging`);
    returns its sha256. Refuses to replace an existing pool or manifest (a pool is judged as it
    was frozen, never rewritten)."""
    path = Path(path)
    check_new(path)
    with staging(path.parent) as stage:
        stage.place(stage_pool(stage, path.name, pool, note))
    return sha256_file(path)


def read_pool(path: str | Path) -> tuple[dict, str]:
    """A frozen pool and its sha256; the manifest beside it must still match."""
    path = Path(path)
    _check_pair(path)
    if not path.exists():
        raise GabaritoError("pool file not found", path=path)
    try:
        verify_frozen(lock_path(path))
    except GabaritoError as exc:
        if exc.path is None or Path(exc.path) != path:
            raise
        raise GabaritoError(f"the pool was changed after it was frozen in {lock_path(path).name} (modified since: "
                            f"grades given on it could not be trusted); put back the file as it was frozen, or make "
                            f"a new pool", path=path) from None
    data = read_json(path, missing="pool file not found")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or data.get("kind") not in KINDS:
        raise GabaritoError(f"not a pool file (schema {SCHEMA})", path=path)
    seen: set[str] = set()
    for i, q in enumerate(data.get("questions") or [], start=1):
        if not isinstance(q, dict) or not isinstance(q.get("candidates"), list) or "id" not in q:
            raise GabaritoError("question without id or candidates", path=path, record=i)
        for c in q["candidates"]:
            if not isinstance(c, dict) or not {"pair", "doc"} <= set(c) or c["pair"] in seen:
                raise GabaritoError(f"bad or repeated candidate {c!r:.60}", path=path, record=i)
            seen.add(c["pair"])
    if not seen:
        raise GabaritoError("the pool holds no candidate", path=path)
    return data, sha256_file(path)


def pool_pairs(pool: Mapping) -> list[tuple[str, str, str]]:
    """``[(pair id, question id, doc id)]`` in the order the page shows them."""
    return [(c["pair"], q["id"], c["doc"]) for q in pool["questions"] for c in q["candidates"]]


def sub_pool(pool: Mapping, pairs: Sequence[str], *, parent_sha256: str) -> dict:
    """The pool of ``pairs`` only (same ids, order and texts), for an adjudicator."""
    keep = set(pairs)
    items = []
    for q in pool["questions"]:
        cands = [c for c in q["candidates"] if c["pair"] in keep]
        if cands:
            items.append({**q, "candidates": cands})
    meta = {"parent_pool_sha256": parent_sha256, "n_questions": len(items),
            "n_pairs": sum(len(i["candidates"]) for i in items),
            "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    return {"schema": SCHEMA, "kind": "adjudication", "meta": meta, "questions": items}
