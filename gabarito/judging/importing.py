"""``gabarito judgments import``: agreement, the adjudicator's pool, and frozen graded qrels.

Given the grades of one or two assessors on the same frozen pool (:mod:`gabarito.judging.grades`):

* two assessors: the confusion matrix and Cohen's kappa, unweighted and linear, each with a
  bootstrap interval (:func:`gabarito.measure.agreement.agreement_summary`), written to
  ``agreement.json``; the pairs they graded differently become ``adjudication_pool.json``, a pool
  of its own (same pair ids and texts, frozen in ``adjudication_pool.lock.json``) that an
  adjudicator judges with the same page, blind to both grades;
* with the adjudicator's grades (``adjudication``) or when nobody disagreed (or with one
  assessor): one grade per pair (:func:`gabarito.measure.judgments.combine`: the agreed grade,
  else the adjudicator's) and the graded qrels, frozen together in ``qrels.lock.json``:
  ``qrels.trec`` (``qid 0 doc grade``, every judged pair, 0 included), ``evaluation.json`` (the
  questions with ``relevantIds`` = grade >= 1 and ``relevance`` = every grade, which ``gabarito
  evaluate --evaluation`` scores with graded measures: nDCG from the grades, recall and MRR at
  grade >= 1), ``evaluation_grade2.json`` (the same with only grade 2 relevant: recall and MRR at
  grade 2), ``judgments.json`` (each pair's grades and the rule that decided it) and, when every
  question id is a whole number (what TREC topics allow), ``topics.txt``, so that ``gabarito
  evaluate --evaluation topics.txt --qrels qrels.trec`` reads the same judgments. A question
  whose candidates were all graded 0 has no relevant id: ``gabarito evaluate`` reads it as a
  question the documents do not answer.

Every input is checked and every output computed before the first file is written; the files are
then placed together or not at all (:mod:`gabarito.judging.staging`). Frozen means frozen: a
folder whose qrels are frozen takes no further import, and two grades files that differ only in
the assessor's name (a copy) are refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from gabarito.core.runs import Qrels
from gabarito.errors import GabaritoError
from gabarito.files import read_json
from gabarito.hashing import sha256_file
from gabarito.judging.grades import read_grades
from gabarito.judging.pool import pool_pairs, read_pool, stage_pool, sub_pool
from gabarito.judging.staging import Stage, staging
from gabarito.measure.agreement import agreement_summary
from gabarito.measure.judgments import combine, graded_qrels, resolutions
from gabarito.measure.stats import DEFAULT_SEED

ADJ_POOL = "adjudication_pool.json"
QRELS, EVALUATION, EVALUATION_2, JUDGMENTS, AGREEMENT, QRELS_LOCK = (
    "qrels.trec", "evaluation.json", "evaluation_grade2.json", "judgments.json", "agreement.json", "qrels.lock.json")
TOPICS = "topics.txt"


def _adjudication_pool(out: Path, pool: dict, sha: str, differ: list[str]) -> tuple[dict | None, str | None, bool]:
    """``(adjudication pool, its sha256, whether it must be written)``; an existing one must hold
    exactly the disagreements of these grades."""
    path = out / ADJ_POOL
    if path.exists():
        adj, adj_sha = read_pool(path)
        if adj.get("meta", {}).get("parent_pool_sha256") != sha or [p for p, _, _ in pool_pairs(adj)] != differ:
            raise GabaritoError("holds the disagreements of other grades or another pool: import into another "
                                "--out", path=path)
        return adj, adj_sha, False
    if not differ:
        return None, None, False
    return sub_pool(pool, differ, parent_sha256=sha), None, True


def _evaluation_records(pool: dict, qrels: Qrels, min_grade: int = 1) -> list[dict]:
    """The questions as a ``gabarito evaluate`` evaluation file: with ``min_grade`` 1 every grade is
    kept (graded measures); with 2 only the full answers count, as grade 1 (binary at grade 2)."""
    records = []
    for q in pool["questions"]:
        grades = qrels.get(q["id"], {})
        if min_grade > 1:
            grades = {d: int(g >= min_grade) for d, g in grades.items()}
        records.append({"id": q["id"], "query": q["text"],
                        "relevantIds": sorted(d for d, g in grades.items() if g >= 1),
                        "relevance": dict(sorted(grades.items()))})
    return records


def _assessors(grades: Sequence[str | Path], pool: dict, sha: str) -> tuple[list[str], dict, dict]:
    """``(names, a, b)``: one or two assessors' grades (``b`` is ``a`` with one assessor)."""
    if not 1 <= len(grades) <= 2:
        raise GabaritoError(f"import takes the grades of one or two assessors, not {len(grades)} files")
    read = [read_grades(p, pool, sha) for p in grades]
    names = [name for name, _ in read]
    if len(set(names)) != len(names):
        raise GabaritoError(f"two grades files by the same assessor {names[0]!r}", path=grades[1])
    if len(grades) == 2:
        first, second = ({k: v for k, v in read_json(p).items() if k != "assessor"} for p in grades)
        if first == second:
            raise GabaritoError(f"is {grades[0]} with only the assessor's name changed (the same grades, exported "
                                f"at the same time): a copy is not a second assessor", path=grades[1])
    return names, read[0][1], read[-1][1]


def _adjudicator(adjudication: Path, out: Path, adj_pool: dict | None, adj_sha: str | None, new_adj: bool,
                 names: list[str]) -> tuple[str, dict[str, int]]:
    if adj_pool is None:
        raise GabaritoError("the assessors agreed on every pair: there is nothing to adjudicate", path=adjudication)
    if new_adj:
        raise GabaritoError(f"no frozen {ADJ_POOL} in {out}: import the two grades files first, have the "
                            f"adjudicator judge that pool, then import again with --adjudication", path=adjudication)
    adjudicator, c = read_grades(adjudication, adj_pool, adj_sha)
    if adjudicator in names:
        raise GabaritoError(f"the adjudicator {adjudicator!r} is one of the assessors", path=adjudication)
    return adjudicator, c


def _stage_qrels(stage: Stage, pool: dict, sha: str, combined: dict, names: list[str],
                 adjudicator: str | None) -> list[str]:
    """Stage the qrels, the evaluation files and the judgments, and their freeze manifest (last)."""
    qrels = graded_qrels(combined["pairs"], [q["id"] for q in pool["questions"]])
    stage.write_text(QRELS, qrels.to_trec())
    stage.write_json(EVALUATION, _evaluation_records(pool, qrels))
    stage.write_json(EVALUATION_2, _evaluation_records(pool, qrels, min_grade=2))
    stage.write_json(JUDGMENTS, {"schema": "gabarito.judgments/1", "pool_sha256": sha, "assessors": names,
                                 "adjudicator": adjudicator,
                                 "pairs": [{"pair": pid, **{k: v for k, v in p.items() if k != "expected"}}
                                           for pid, p in combined["pairs"].items()]})
    files = [QRELS, EVALUATION, EVALUATION_2, JUDGMENTS]
    topics = _topics(pool)
    if topics is not None:  # `gabarito evaluate --evaluation topics.txt --qrels qrels.trec` reads them too
        files.append(TOPICS)
        stage.write_text(TOPICS, topics)
    stage.freeze(QRELS_LOCK, files, note=f"graded qrels of pool {sha[:12]}, frozen at import")
    return [*files, QRELS_LOCK]


def _check_folder(out: Path) -> None:
    """Frozen means frozen: a folder whose graded qrels are frozen takes no further import (its
    agreement, judgments and qrels stay as they are), nor does one an interrupted import of an
    earlier version left with qrels and no manifest."""
    if (out / QRELS_LOCK).exists():
        raise GabaritoError("graded qrels are already frozen here; they are never rewritten, and a folder with "
                            "frozen qrels takes no further import: import into another --out", path=out / QRELS_LOCK)
    left = [n for n in (QRELS, EVALUATION, EVALUATION_2, JUDGMENTS, TOPICS) if (out / n).exists()]
    if left:
        raise GabaritoError(f"holds {left[0]} without {QRELS_LOCK} (an import was stopped part way): import into "
                            f"another --out", path=out)


def _check_agreement(out: Path, sha: str, names: list[str]) -> None:
    """An agreement already in ``out`` must be that of the same assessors on the same pool."""
    path = out / AGREEMENT
    if path.exists():
        old = read_json(path)
        if not isinstance(old, dict) or old.get("pool_sha256") != sha or old.get("assessors") != names:
            raise GabaritoError(f"holds the agreement of other assessors or another pool "
                                f"({(old or {}).get('assessors') if isinstance(old, dict) else None}), not of "
                                f"{names}: import into another --out", path=path)


def _topics(pool: dict) -> str | None:
    """TREC topics of the pool's questions, when every id is a whole number as TREC topics need
    (``<num>``) and no text holds a ``<``; else ``None``."""
    qs = pool["questions"]
    if not all(q["id"].isdigit() and q["id"] == str(int(q["id"])) and "<" not in q["text"] for q in qs):
        return None
    return "".join(f"<top>\n<num> {q['id']} </num>\n<title> {' '.join(q['text'].split())} </title>\n</top>\n"
                   for q in qs)


def import_judgments(grades: Sequence[str | Path], pool_path: str | Path, out: str | Path, *,
                     adjudication: str | Path | None = None, seed: int = DEFAULT_SEED,
                     resamples: int = 10000) -> dict:
    """Check, compute, then write; returns what was found and written (paths as strings)."""
    out = Path(out)
    _check_folder(out)
    pool, sha = read_pool(pool_path)
    if pool.get("kind") != "pool":
        raise GabaritoError("is an adjudication pool: import the grades of the original pool", path=pool_path)
    names, a, b = _assessors(grades, pool, sha)
    pairs = pool_pairs(pool)
    key = {pid: {"question": q, "concept": d} for pid, q, d in pairs}
    differ = [pid for pid, _, _ in pairs if a[pid] != b[pid]]
    result: dict = {"pool": str(pool_path), "pool_sha256": sha, "assessors": names, "n_pairs": len(pairs),
                    "n_disagreements": len(differ), "written": []}
    agreement = None
    if len(names) == 2:
        order = [pid for pid, _, _ in pairs]
        agreement = {"schema": "gabarito.agreement/1", "pool_sha256": sha, "assessors": names, "seed": seed,
                     "resamples": resamples, "n_disagreements": len(differ),
                     **agreement_summary([a[p] for p in order], [b[p] for p in order], resamples=resamples, seed=seed)}
        result["agreement"] = agreement
    adj_pool, adj_sha, new_adj = _adjudication_pool(out, pool, sha, differ)
    c: dict[str, int] = {}
    if adjudication is not None:
        result["adjudicator"], c = _adjudicator(Path(adjudication), out, adj_pool, adj_sha, new_adj, names)
        if agreement is not None:
            agreement["adjudication"] = {"assessor": result["adjudicator"], "pool_sha256": adj_sha,
                                         **resolutions(combine(a, b, c, key, {})["pairs"])}
    awaiting = bool(differ) and not c  # disagreements, no adjudication yet: no qrels
    _check_agreement(out, sha, names)
    # everything is checked: write, all files together or none (the freeze manifests last)
    with staging(out) as stage:
        staged = []
        if agreement is not None:
            stage.write_json(AGREEMENT, agreement)
            staged.append(AGREEMENT)
        if new_adj:
            staged += stage_pool(stage, ADJ_POOL, adj_pool, "the assessors' disagreements, frozen before adjudication")
        if not awaiting:
            staged += _stage_qrels(stage, pool, sha, combine(a, b, c, key, {}), names, result.get("adjudicator"))
        result["written"] = [str(p) for p in stage.place(staged, replace=[AGREEMENT])]
    result["adjudication_pool"] = str(out / ADJ_POOL) if adj_pool is not None else None
    result["qrels"] = None
    if not awaiting:
        result["qrels"], result["qrels_sha256"] = str(out / QRELS), sha256_file(out / QRELS)
    return result


def kappa_line(agreement: dict) -> str:
    """``kappa unweighted 0.62 [0.41, 0.80], linear ...`` for the command's summary."""
    def one(block: dict) -> str:
        k, ci = block["kappa"], block["ci95"]
        if k is None:
            return "undefined"
        return f"{k:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
    return f"Cohen's kappa unweighted {one(agreement['unweighted'])}, linear {one(agreement['linear'])} " \
           f"(95% bootstrap intervals, {agreement['n_pairs']} pairs)"
