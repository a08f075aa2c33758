"""The help-center runs judged blind, and their comparison scored again against the judgments.

Inputs, all under ``judging/`` (made by the commands in ``judging/README.md``): two
``gabarito evaluate`` runs (``runs/bm25``, ``runs/e5``), the blind pool of their top 5 with the
known answers added (``pool.json``, frozen in ``pool.lock.json`` before any grade), two assessors'
grades and a third's adjudication (``grades/``), and what ``gabarito judgments import`` froze from
them (``round1/``: ``agreement.json``, the graded qrels in ``qrels.lock.json``).

Every lock is verified before anything is read (the pool's, the adjudication pool's, the graded
qrels', each run folder's manifest, the study's gold); the run records must name the frozen gold
and the pool's documents. Then, through the library only:

* agreement: Cohen's kappa recomputed from the grades files by
  :func:`gabarito.measure.agreement.agreement_summary` with the seed and resamples of
  ``agreement.json``, and refused unless it equals that file;
* both runs scored by :func:`gabarito.measure.score.score_runs` (means, 95% intervals, paired
  tests with Holm) under three answer keys: the original gold (the runs' ``qrels.trec``, from
  ``data/helpcenter/evaluation.json``), the graded judgments (grade >= 1 relevant; nDCG with the
  grades as gains) and grade 2 only. A question without any relevant document under a key is
  left out of that key's scores, as :func:`gabarito.measure.metrics.evaluate` does everywhere;
  its id is recorded;
* what the judgments changed in the answer key: questions that gained relevant documents the gold
  did not list, known answers the assessors graded 0 or 1.

Writes ``judging.json`` (atomic, recorded in the folder's manifest, with provenance whose gold
hashes include the pool and the graded qrels). Run with
``.venv/bin/python case-studies/helpcenter/run_judging.py``.
"""

from __future__ import annotations

from pathlib import Path

from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError
from gabarito.evaluation.paired import verified
from gabarito.files import read_json
from gabarito.hashing import sha256_file
from gabarito.inputs.gold import verify_frozen
from gabarito.judging.grades import read_grades
from gabarito.judging.pool import pool_pairs, read_pool
from gabarito.measure.agreement import agreement_summary
from gabarito.measure.metrics import as_ranking
from gabarito.measure.score import score_runs
from gabarito.notes import note
from gabarito.study.runner import variant_main
from studies.helpcenter import judging_findings as jf

HERE = Path(__file__).resolve().parent
JUDGING = HERE / "judging"
POOL = JUDGING / "pool.json"
ROUND = JUDGING / "round1"
GRADES = (JUDGING / "grades" / "notas-avaliador-A.json", JUDGING / "grades" / "notas-avaliador-B.json")
ADJUDICATION = JUDGING / "grades" / "notas-avaliador-C.json"
GOLD = "../../data/helpcenter/evaluation.json"
#: The runs, by the names the results use (the comparison is e5 against BM25).
RUNS = {jf.BASELINE: JUDGING / "runs" / "bm25", jf.OTHER: JUDGING / "runs" / "e5"}
#: Who judged, and what they never saw (the judging page's rule; recorded, not measured).
ASSESSORS = {"kind": "language_model", "family": "Claude", "isolated": True,
             "saw": ["grading_guide", "documents", "pairs_question_text_document_id"],
             "blind_to": ["run_names", "ranks", "scores", "known_answers", "other_assessors_grades"]}


def _engine(record: dict) -> dict:
    """How a run searched, for the provenance box: the dense run's exact cosine as its note; the
    BM25 run's in-memory index as the gabarito version that built it."""
    if record["config"]["method"] == "dense":
        return note("engine.exact_cosine")
    return {"name": "gabarito", "version": record["engine"]["version"].split()[-1], "index": record["engine"]["name"]}


def _rel(path: Path) -> str:
    return path.relative_to(HERE).as_posix()


def verified_inputs(gold_sha256: dict) -> dict:
    """Every lock checked; the pool, the runs (ranked lists, gold qrels, records) and the graded qrels."""
    pool, pool_sha = read_pool(POOL)  # verifies pool.lock.json
    qrels_files = verify_frozen(ROUND / "qrels.lock.json")
    verify_frozen(ROUND / "adjudication_pool.lock.json")
    runs, gold, records = {}, {}, {}
    for name, folder in RUNS.items():
        records[name] = read_json(verified(folder / "run.json"))
        runs[name] = Run.from_trec(verified(folder / "run.trec"), name=name)
        gold[name] = Qrels.from_trec(verified(folder / "qrels.trec"))
        if records[name]["evaluation_file_sha256"] != gold_sha256[GOLD]:
            raise GabaritoError("the run was scored against another evaluation file than the frozen gold",
                                path=folder / "run.json")
        if records[name]["corpus_sha256"] != pool["meta"]["documents_sha256"]:
            raise GabaritoError("the run searched other documents than the pool's", path=folder / "run.json")
    if gold[jf.BASELINE] != gold[jf.OTHER]:
        raise GabaritoError("the two runs were scored against different qrels", path=RUNS[jf.OTHER] / "qrels.trec")
    if pool["meta"]["evaluation_file_sha256"] != gold_sha256[GOLD]:
        raise GabaritoError("the pool's known answers come from another evaluation file", path=POOL)
    return {"pool": pool, "pool_sha256": pool_sha, "qrels_files": qrels_files, "runs": runs,
            "records": records, "gold": gold[jf.BASELINE], "graded": Qrels.from_trec(ROUND / "qrels.trec")}


def agreement(pool: dict, pool_sha: str) -> dict:
    """Kappa recomputed by the library from the grades files; must equal ``round1/agreement.json``."""
    stored = read_json(ROUND / "agreement.json")
    if stored["pool_sha256"] != pool_sha:
        raise GabaritoError("agreement of another pool", path=ROUND / "agreement.json")
    (name_a, a), (name_b, b) = (read_grades(p, pool, pool_sha) for p in GRADES)
    order = [pid for pid, _, _ in pool_pairs(pool)]
    again = agreement_summary([a[p] for p in order], [b[p] for p in order], resamples=stored["resamples"],
                              seed=stored["seed"])
    for key in ("unweighted", "linear", "either_nonzero", "confusion"):
        if again[key] != stored[key]:
            raise GabaritoError(f"{key} differs from the grades files recomputed", path=ROUND / "agreement.json")
    return {"assessors": [name_a, name_b], "seed": stored["seed"], "resamples": stored["resamples"],
            "n_disagreements": stored["n_disagreements"], "adjudication": stored.get("adjudication"), **again}


def judged_share(run: Run, qrels: Qrels, qids: list[str], k: int) -> float:
    """Share of the documents a run ranks in its top ``k`` on ``qids`` that carry a judgment."""
    top = [(q, d) for q in qids for d in as_ranking(run.get(q, []))[:k]]
    return sum(d in qrels.get(q, {}) for q, d in top) / len(top) if top else 0.0


def gold_against_judgments(gold: Qrels, graded: Qrels, qids: list[str]) -> dict:
    """What the judgments changed in the answer key, question by question."""
    gained = [q for q in qids if graded.relevant(q) - gold.relevant(q)]
    known = [(q, d) for q in qids for d in sorted(gold.relevant(q))]
    grade_of = {(q, d): graded.get(q, {}).get(d) for q, d in known}
    return {"n_questions": len(qids),
            "gold_answerable": len(gold.judged()), "graded_answerable": len(graded.judged()),
            "grade2_answerable": len(graded.judged(2)),
            "gained": gained, "gained_without_gold_answer": [q for q in gained if not gold.relevant(q)],
            "new_relevant_pairs": sum(len(graded.relevant(q) - gold.relevant(q)) for q in qids),
            "known_answers": len(known),
            "known_graded": {str(g): sum(v == g for v in grade_of.values()) for g in (0, 1, 2)},
            "known_unjudged": sum(v is None for v in grade_of.values()),
            "known_rejected": [{"question": q, "doc": d} for (q, d), v in grade_of.items() if v == 0],
            "lost_every_answer": [q for q in qids if gold.relevant(q) and not graded.relevant(q)]}


def score(inputs: dict, ctx) -> dict:
    """One Report per answer key (:data:`jf.REGIMES`), with the questions each leaves out."""
    keys = {"gold": inputs["gold"], "graded": inputs["graded"], "grade2": inputs["graded"].at_least(2)}
    qids = [q["id"] for q in inputs["pool"]["questions"]]
    out = {}
    for regime in jf.REGIMES:
        qrels = keys[regime]
        report = score_runs(inputs["runs"], qrels, jf.MEASURES, seed=ctx.seed, resamples=ctx.resamples)
        out[regime] = {"report": report.to_dict(), "n": report.n,
                       "left_out": sorted(set(qids) - set(report.queries))}
    return out


def coverage(inputs: dict, qids: list[str]) -> dict:
    """Per run, the share of its top 5 and top 10 that the assessors judged (the rest counts as not
    relevant under the graded keys; the pool's ``depth``)."""
    return {m: {f"at_{k}": judged_share(r, inputs["graded"], qids, k) for k in (5, 10)}
            for m, r in inputs["runs"].items()}


def run(ctx) -> dict:
    with ctx.phase("verify"):
        inputs = verified_inputs(ctx.gold_sha256)
    pool = inputs["pool"]
    # the judged answer key is gold for these results: a later change to it makes them stale
    ctx.gold_sha256.update({_rel(POOL): inputs["pool_sha256"],
                            **{_rel(ROUND / f): sha for f, sha in inputs["qrels_files"].items()}})
    with ctx.phase("agreement"):
        agreed = agreement(pool, inputs["pool_sha256"])
    judgments = read_json(ROUND / "judgments.json")
    with ctx.phase("score"):
        regimes = score(inputs, ctx)
    qids = [q["id"] for q in pool["questions"]]
    records = inputs["records"]
    results = {
        "provenance": ctx.provenance(
            corpus={"name": "helpcenter", "path": "data/helpcenter/docs", "sha256": pool["meta"]["documents_sha256"],
                    "n_docs": records[jf.BASELINE]["n_documents"]},
            model=records[jf.OTHER]["model"], engine={m: _engine(r) for m, r in records.items()},
            parameters={"measures": list(jf.MEASURES), "regimes": list(jf.REGIMES),
                        "compared": [jf.OTHER, jf.BASELINE]}),
        "inputs": {
            "pool": {"path": _rel(POOL), "sha256": inputs["pool_sha256"], **{k: pool["meta"][k] for k in (
                "depth", "seed", "n_runs", "n_questions", "n_pairs", "known_answers_added")}},
            "qrels": {"path": _rel(ROUND / "qrels.trec"), "sha256": inputs["qrels_files"]["qrels.trec"],
                      "lock": _rel(ROUND / "qrels.lock.json")},
            "runs": {m: {"path": _rel(RUNS[m]), "run_id": r["run_id"], "method": r["config"]["method"],
                         "model": r["config"]["model"], "segmentation": r["config"]["segmentation"],
                         "run_trec_sha256": sha256_file(RUNS[m] / "run.trec")} for m, r in records.items()},
            "gold": {"path": GOLD, "sha256": ctx.gold_sha256[GOLD]}},
        "assessors": {**ASSESSORS, "names": judgments["assessors"], "adjudicator": judgments["adjudicator"],
                      "n_adjudicated": sum(p["rule"] == "adjudicated" for p in judgments["pairs"])},
        "agreement": agreed,
        "key_changes": gold_against_judgments(inputs["gold"], inputs["graded"], qids),
        "regimes": regimes,
        "judged_share": coverage(inputs, qids),
    }
    results["comparison"] = jf.comparison_rows(results)
    results["changes"] = jf.changes(results)
    return results


if __name__ == "__main__":
    variant_main(HERE, run, name="helpcenter/judging", title="The help-center runs judged blind: agreement, "
                 "and the comparison under graded judgments", results="judging.json", doc=__doc__)
