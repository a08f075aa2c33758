"""The fusion study: its identity-check logic on a fake server, and the study end to end on ADI.

The end-to-end test needs the dataset mirror, the packaged model and the embedded ArcadeDB
server (``pytest -m integration tests/case_studies/test_fusion_study.py``); it runs the study in place
(its gold lives in two other studies' folders) with ``--out`` in a temporary folder.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.measure import metrics
from gabarito.core.runs import Qrels, Run
from gabarito.retrieval.fusion import rrf_runs
from gabarito.retrieval.protocol import Queries
from gabarito.measure.report import ALPHA, SCHEMA, Report

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "fusion"
from studies.fusion import findings, identity


class FakeClient:
    """Answers the two sub-queries of the native statement in the 'server order' given."""

    def __init__(self, bm25_rows, knn_rows):
        self.bm25_rows, self.knn_rows = bm25_rows, knn_rows

    def query(self, sql, params):
        if sql == "BM25":
            return self.bm25_rows[:params["k"]]
        return self.knn_rows[:params["k"]]


class FakeIndex:
    sql_bm25, sql_knn = "BM25", "KNN"

    def __init__(self, bm25_rows, knn_rows):
        self.client = FakeClient(bm25_rows, knn_rows)


def python_and_native(server_bm25, server_knn, depth):
    """The Python path's lists (ties by doc id, BM25 read past the depth) and the native result
    (RRF of the server's own order and cut)."""
    bm25 = sorted(((r["doc_id"], r["score"]) for r in server_bm25), key=lambda p: (-p[1], p[0]))[:depth]
    knn = [(r["doc_id"], 1.0 - r["distance"]) for r in server_knn][:depth]
    python = rrf_runs([Run({"q": bm25}), Run({"q": knn})], rrf_k=60, depth=depth)["q"]
    native = rrf_runs([Run({"q": [r["doc_id"] for r in server_bm25[:depth]]}), Run({"q": [d for d, _ in knn]})],
                      rrf_k=60, depth=depth)["q"]
    return python, native


def check_one(server_bm25, server_knn, depth):
    python, native = python_and_native(server_bm25, server_knn, depth)
    assert [d for d, _ in python] != [d for d, _ in native]
    index = FakeIndex(server_bm25, server_knn)
    return identity.check(index, Queries(["q"], ["a question"]), [[0.1, 0.2]], Run({"q": python}),
                          Run({"q": native}), depth, 60, ["q"])


def test_a_tie_across_the_depth_is_explained_as_input_ties():
    # b and c tie at the cut (depth 2): the server keeps c, the Python path keeps b (by doc id)
    server_bm25 = [{"doc_id": "a", "score": 3.0}, {"doc_id": "c", "score": 2.0}, {"doc_id": "b", "score": 2.0}]
    server_knn = [{"doc_id": "d", "distance": 0.1}, {"doc_id": "a", "distance": 0.2}]
    out = check_one(server_bm25, server_knn, 2)
    assert (out["identical_full"], out["differ"], out["causes"]["input_ties"]) == (0, 1, 1)
    assert out["differences"][0]["tie_at_cut"] is True
    assert out["arithmetic"] == {"identical_to_server_lists": 1, "max_relative_score_gap": 0.0}


def test_a_reordered_tie_inside_the_list_is_input_ties_without_a_tie_at_the_cut():
    server_bm25 = [{"doc_id": "z", "score": 2.0}, {"doc_id": "y", "score": 2.0}, {"doc_id": "x", "score": 1.0},
                   {"doc_id": "w", "score": 0.5}]
    server_knn = [{"doc_id": "y", "distance": 0.1}, {"doc_id": "x", "distance": 0.2}, {"doc_id": "z", "distance": 0.3}]
    out = check_one(server_bm25, server_knn, 3)
    assert out["causes"] == {"input_ties": 1, "float32": 0, "unexplained": 0}
    assert out["differences"][0]["tie_at_cut"] is False and out["explained"] == 1


def test_float32_and_unexplained():
    python = [("a", 0.0328), ("b", 0.0328 * (1 - 1e-8)), ("c", 0.01)]
    assert identity.float32_swaps(python, ["b", "a", "c"])
    assert not identity.float32_swaps(python, ["c", "a", "b"])  # c is far below a
    assert not identity.float32_swaps(python, ["a", "b", "d"])  # another document
    server = [("a", 0.0328), ("b", 0.0328), ("c", 0.01)]
    assert identity.explain(python, ["a", "b", "c"], server) == "input_ties"
    assert identity.explain(python, ["b", "a", "c"], server) == "float32"
    assert identity.explain(python, ["c", "a", "b"], server) == "unexplained"


def test_agreement_counts_whole_lists_and_top10():
    a = Run({"q1": [(f"d{i}", 20.0 - i) for i in range(12)], "q2": [("x", 2.0), ("y", 1.0)]})
    b = Run({"q1": [(f"d{i}", 20.0 - i) for i in range(10)] + [("d11", 9.5), ("d10", 9.4)],
             "q2": [("y", 2.0), ("x", 1.0)]})
    assert identity.agreement(a, b, ["q1", "q2"]) == {"n": 2, "identical_full": 0, "identical_top10": 1}


# --- end to end --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def adi_results(tmp_path_factory, mirror):
    if not (Path(mirror) / "adi").exists():
        pytest.skip(f"no ADI in the mirror {mirror}")
    out = tmp_path_factory.mktemp("fusion")
    proc = subprocess.run(
        [sys.executable, str(STUDY / "run_fusion.py"), "--corpora", "adi", "--limit", "16", "--latency-corpora", "adi",
         "--latency-passes", "1", "--resamples", "200", "--out", str(out), "--db-dir", str(out / "db"),
         "--mirror", str(mirror)],
        check=False, capture_output=True, text=True, timeout=1800, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, json.loads((out / "results.json").read_text())


@pytest.mark.integration
def test_study_on_adi_end_to_end(adi_results):
    out, res = adi_results
    assert res["study"] == "fusion" and res["provenance"]["parameters"]["limit"] == 16
    assert set(res["provenance"]["gold_sha256"]) == {"../standard_collections/qrels/adi.txt"}
    s = res["corpora"]["adi"]["sets"]["adi"]
    idn = s["identity"]
    assert idn["n"] == s["n"] == 16
    assert idn["identical_full"] + idn["differ"] == idn["n"] and sum(idn["causes"].values()) == idn["differ"]
    assert idn["causes"]["unexplained"] == 0 and idn["identical_top10"] >= idn["identical_full"]

    # scores: every mean inside its interval, per-query values average to the mean
    for method, values in s["metrics"].items():
        for measure, value in values.items():
            low, high = s["ci95"][method][measure]
            assert 0.0 <= low <= value + 1e-12 and value <= high + 1e-12 <= 1.0 + 1e-12
            assert value == pytest.approx(metrics.mean(s["per_query"][method][measure]), abs=1e-12)
    # the tests: each tested fusion against the baseline, Holm over that family
    family = {m for m in s["metrics"]} - set(res["provenance"]["parameters"]["not_tested"])
    assert s["schema"] == SCHEMA and Report.from_dict(s).n == s["n"]
    for measure in s["measures"]:
        rows = [r for r in s["tests"] if r["measure"] == measure]
        assert {r["a"] for r in rows} == family and {r["b"] for r in rows} == {"rrf_k60"}
        assert all(r["p_holm"] >= r["p_randomization"] and r["holm_family"] == len(family) for r in rows)

    # cross-fitting: disjoint halves covering the set, each weight the best of its own half
    for name, fit in s["tuning"].items():
        f1, f2 = fit["folds"]
        assert sorted(f1["tuned_on"] + f2["tuned_on"]) == sorted(s["per_query"]["rrf_k60"]["nDCG@10"])
        assert not set(f1["tuned_on"]) & set(f2["tuned_on"])
        for fold in fit["folds"]:
            assert max(p["score"] for p in fold["curve"]) == next(p["score"] for p in fold["curve"]
                                                                    if p["value"] == fold["chosen"])

    # the TREC files: the first stages to the depth, the fusions to the cut; RRF recomputed from
    # the first stages' files gives the fused file's top 10
    runs = out / "runs"
    bm25, dense = Run.from_trec(runs / "adi.bm25.trec"), Run.from_trec(runs / "adi.dense.trec")
    fused = Run.from_trec(runs / "adi.rrf_k60.trec")
    again = rrf_runs([bm25, dense], rrf_k=60, depth=100)
    assert all(again.ids(q)[:10] == fused.ids(q) for q in fused)
    assert Qrels.from_trec(runs / "qrels.adi.adi.txt").judged() == sorted(fused)

    lat = res["corpora"]["adi"]["latency_ms"]["100"]
    assert set(lat["stages_ms"]) == {"http_floor", "bm25", "knn", "python", "native"}
    assert lat["valid"] == (lat["peak_load_1min"] <= lat["max_load"])


@pytest.mark.integration
def test_findings_read_the_results(adi_results):
    _, res = adi_results
    tot = findings.identity_totals(res)
    assert tot["n"] == 16 and tot["identical_full"] + tot["differ"] == 16
    rows = findings.comparison_rows(res)
    tested = {t["a"] for t in res["corpora"]["adi"]["sets"]["adi"]["tests"] if t["measure"] == "nDCG@10"}
    assert len(rows) == 1 and rows[0]["best"] in tested
    k = findings.k_rows(res)[0]
    assert set(k["values"]) == {1, 10, 60, 100} and k["spread"] >= 0
    assert len(findings.latency_rows(res)) == 2
