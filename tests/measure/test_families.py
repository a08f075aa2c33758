"""Comparison families as a parameter of the one scorer (issue 40, item 2).

Unit cases on small series (what each family tests and corrects, how it is written and read
back), and the guard "no number changes": the families recompute, from the per-query values and
rows the committed results store, the p and Holm p those files hold (floats to 1e-12):

* ``case-studies/fusion/results.json`` -- every set, every measure: ``Against(rrf_k60)``;
* ``case-studies/standard_collections/rerankers_weak.json`` -- every fold and first stage:
  ``Against(first stage)`` over ``per_query_nDCG@10``; the lesson rows; ``primary`` (``Across``
  the folds of a recipe, :func:`gabarito.measure.readings.primary_holm`);
* ``case-studies/standard_collections/rerankers_weak_ablation.json`` -- ``primary``
  (``Across`` the collections of a configuration).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError
from gabarito.measure import stats
from gabarito.measure.families import (Across, Against, AllPairs, across, family_from_dict, paired_across,
                                       paired_tests)
from gabarito.measure.readings import holm_over, lift_difference, primary_families, primary_holm, row_against
from gabarito.measure.report import Report
from gabarito.measure.score import score_runs
from gabarito.measure.tuning import against_baseline

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-12


def _load(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


def _assert_close(got, want, where: str = "") -> None:
    """Equal structures; floats to :data:`TOL` (NaN equals NaN)."""
    if isinstance(want, float) or isinstance(got, float):
        assert isinstance(got, (int, float)) and isinstance(want, (int, float)), where
        assert (math.isnan(got) and math.isnan(want)) or abs(got - want) <= TOL, f"{where}: {got!r} != {want!r}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            _assert_close(got[k], want[k], f"{where}/{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_close(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


def _runs_and_qrels(n_queries: int = 30):
    rng = np.random.default_rng(11)
    qrels = Qrels({f"q{i}": {f"d{i % 7}": 1, f"d{(i + 3) % 7}": 2} for i in range(n_queries)})
    runs = {}
    for name in ("base", "better", "worse"):
        lists = {}
        for i in range(n_queries):
            docs = rng.permutation(7)
            lists[f"q{i}"] = [(f"d{d}", float(10 - r)) for r, d in enumerate(docs)]
        runs[name] = Run(lists, name=name)
    return runs, qrels


# --- F40-family: the family is a parameter of the scorer and a field of the report ---------------

def test_the_default_family_is_all_pairs_and_gives_todays_tests():
    runs, qrels = _runs_and_qrels()
    report = score_runs(runs, qrels, ["nDCG@10", "RR@10"], resamples=500, seed=3)
    assert report.family == AllPairs()
    assert "family" not in report.to_dict()  # all pairs is what a block without a family means
    assert AllPairs().to_dict() == {"kind": "all_pairs", "per": "measure", "correction": "holm"}
    tables = {m: {k: [report.values(k, m)[q] for q in report.queries] for k in runs} for m in ("nDCG@10", "RR@10")}
    want = stats.compare_tables(tables, n_resamples=500, seed=3)
    assert list(report.tests) == [{"measure": m, **row} for m, rows in want.items() for row in rows]
    assert len(report.tests) == 2 * 3  # three pairs per measure


def test_against_in_the_scorer_is_exactly_against_baseline():
    runs, qrels = _runs_and_qrels()
    report = score_runs(runs, qrels, ["nDCG@10", "RR@10"], resamples=500, seed=3, family=Against("base"))
    assert report.family == Against("base")
    for m in ("nDCG@10", "RR@10"):
        rows = [{k: v for k, v in r.items() if k != "measure"} for r in report.tests if r["measure"] == m]
        assert rows == against_baseline({k: report.values(k, m) for k in runs}, "base", resamples=500, seed=3)
        assert [(r["a"], r["b"], r["holm_family"]) for r in rows] == [("better", "base", 2), ("worse", "base", 2)]
        raw = {r["a"]: r["p_randomization"] for r in rows}
        assert [r["p_holm"] for r in rows] == [stats.holm(raw)[r["a"]] for r in rows]
    assert not report.has_test("better", "worse", "nDCG@10")  # only against the baseline
    among = score_runs(runs, qrels, ["nDCG@10"], resamples=500, seed=3, family=Against("base", among=("worse",)))
    assert [(r["a"], r["b"], r["holm_family"]) for r in among.tests] == [("worse", "base", 1)]


def test_a_stage_report_tests_its_readings_against_the_stage_on_one_measure_and_reads_back():
    from gabarito.measure.readings import stage_report

    runs, qrels = _runs_and_qrels()
    report = stage_report(runs, qrels, "base", ["nDCG@10", "RR@10"], resamples=500, seed=3)
    assert {r["measure"] for r in report.tests} == {"nDCG@10"}  # the other measures: means and intervals only
    assert report.interval("worse", "RR@10") is not None
    rows = [{k: v for k, v in r.items() if k != "measure"} for r in report.tests]
    assert rows == against_baseline({k: report.values(k, "nDCG@10") for k in runs}, "base", resamples=500, seed=3)
    stored = report.to_dict(per_query=False)
    assert row_against(stored, "worse", "base") == {"measure": "nDCG@10", **rows[1]}
    with pytest.raises(GabaritoError, match="no test of 'worse' against 'better'"):
        row_against(stored, "worse", "better")


def test_the_scorer_refuses_a_family_it_cannot_run():
    runs, qrels = _runs_and_qrels()
    with pytest.raises(GabaritoError, match="applied to rows already computed"):
        score_runs(runs, qrels, ["nDCG@10"], resamples=200, family=Across("x", ("a", "b")))
    with pytest.raises(GabaritoError, match="baseline 'nobody' has no per-query values"):
        score_runs(runs, qrels, ["nDCG@10"], resamples=200, family=Against("nobody"))
    with pytest.raises(GabaritoError, match="'ghost' to test against 'base'"):
        score_runs(runs, qrels, ["nDCG@10"], resamples=200, family=Against("base", among=("ghost",)))


def test_a_report_carries_its_family_through_its_file():
    runs, qrels = _runs_and_qrels(12)
    for family in (AllPairs(), Against("base"), Against("base", among=("better",))):
        report = score_runs(runs, qrels, ["nDCG@10"], resamples=200, seed=1, family=family)
        block = json.loads(json.dumps(report.to_dict()))
        again = Report.from_dict(block)
        assert again == report and again.family == family
    old = report.to_dict()
    del old["family"]  # a block without a family was scored over all pairs
    assert Report.from_dict(old).family == AllPairs()
    assert family_from_dict(AllPairs().to_dict()) == AllPairs()
    fam = Across("f", ("x", "y"), p=("cutoff1", "p"))
    assert family_from_dict(json.loads(json.dumps(fam.to_dict()))) == fam
    for bad in ({"kind": "some"}, {"kind": "against"}, {"kind": "all_pairs", "correction": "bonferroni"}, ["x"]):
        with pytest.raises(GabaritoError, match="comparison family"):
            family_from_dict(bad)


def test_gabarito_evaluate_leaves_the_default_family_unwritten(tmp_path):
    """``gabarito evaluate`` scores all pairs per measure, the family a block without one means: run.json
    stays as before families, and reads back as AllPairs."""
    rng = np.random.default_rng(5)
    words = np.array([f"w{i}" for i in range(200)])
    docs = [{"id": f"d{i}", "title": f"doc {i}", "text": " ".join(rng.choice(words, 20))} for i in range(20)]
    questions = [{"id": f"q{i}", "query": " ".join(rng.choice(docs[i % 20]["text"].split(), 2)),
                  "relevantIds": [docs[i % 20]["id"]]} for i in range(30)]
    (tmp_path / "docs.json").write_text(json.dumps(docs), encoding="utf-8")
    (tmp_path / "evaluation.json").write_text(json.dumps(questions), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "gabarito.cli", "evaluate", "--documents", str(tmp_path / "docs.json"),
                           "--evaluation", str(tmp_path / "evaluation.json"), "--method", "bm25", "--engine", "memory",
                           "--k", "5", "--out", str(tmp_path / "run"), "--log", str(tmp_path / "log.jsonl")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "GABARITO_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert "family" not in record["report"]  # the default, unwritten: run.json files stay as before
    assert Report.from_dict(record["report"]).family == AllPairs()


# --- F40-across: one comparison across sets, corrected over exactly its members -------------------

def test_across_corrects_exactly_its_members():
    rows = {"adi": {"p_randomization": 0.01}, "npl": {"p_randomization": 0.04}, "cisi": {"p_randomization": 0.03}}
    fam = Across("rrf@20 against bm25", ("adi", "npl", "cisi"))
    assert across(fam, rows) == stats.holm({k: r["p_randomization"] for k, r in rows.items()})
    with pytest.raises(GabaritoError, match="are not its members"):
        across(fam, {k: rows[k] for k in ("adi", "npl")})
    with pytest.raises(GabaritoError, match="holds no"):
        across(Across("sign", ("adi",), p=("cutoff1", "p")), {"adi": {"p": 0.1}})
    with pytest.raises(GabaritoError, match="distinct and not empty"):
        Across("empty", ())
    a, b = [0.1, 0.5, 0.9, 0.2, 0.4], [0.0, 0.5, 0.7, 0.3, 0.1]
    tested = paired_across(Across("two", ("x", "y")), {"x": {"a": a, "b": b}, "y": {"a": b, "b": a}},
                           resamples=300, seed=2)
    raw = {k: r["p_randomization"] for k, r in tested.items()}
    assert {k: r["p_holm"] for k, r in tested.items()} == stats.holm(raw)
    assert tested["x"]["mean_diff"] == pytest.approx(-tested["y"]["mean_diff"])


def test_primary_holm_reproduces_the_committed_weak_reader_primary():
    weak = _load("case-studies/standard_collections/rerankers_weak.json")
    _assert_close(primary_holm(weak["folds"]), weak["primary"], "rerankers_weak.json primary")
    fams = primary_families(weak["folds"])
    assert sorted(fams) == sorted(weak["primary"])
    for recipe, fam in fams.items():
        assert fam["reading"]["members"] == list(weak["primary"][recipe])
        assert family_from_dict(fam["lesson"]).members == tuple(weak["primary"][recipe])


def test_holm_over_reproduces_the_committed_ablation_primary():
    ablation = _load("case-studies/standard_collections/rerankers_weak_ablation.json")
    n = 20
    for name, stored in ablation["primary"].items():
        rows = {c["collection"]: row_against(c["bm25"]["report"], f"rrf@{n}", "bm25")
                for c in ablation["cells"].values() if c["config"] == name}
        _assert_close(holm_over(rows), stored, f"ablation primary {name}")


# --- F40-against: each method against one baseline, from the stored per-query values ---------------

def test_against_reproduces_the_committed_fusion_tests():
    results = _load("case-studies/fusion/results.json")
    seed, resamples = (results["provenance"]["parameters"][k] for k in ("seed", "bootstrap_resamples"))
    checked = 0
    for corpus, entry in results["corpora"].items():
        for key, record in entry["sets"].items():
            stored = record["tests"]
            baseline = stored[0]["b"]
            measures = list(dict.fromkeys(r["measure"] for r in stored))
            among = tuple(dict.fromkeys(r["a"] for r in stored))
            tables = {m: {k: record["per_query"][k][m] for k in (baseline, *among)} for m in measures}
            again = paired_tests(tables, Against(baseline, among=among), resamples=resamples, seed=seed)
            _assert_close([{"measure": m, **row} for m, rows in again.items() for row in rows], stored,
                          f"fusion {corpus}/{key}")
            checked += len(stored)
    assert checked >= 50


def test_against_reproduces_the_committed_weak_reader_tests_and_lessons():
    weak = _load("case-studies/standard_collections/rerankers_weak.json")
    params = weak["provenance"]["parameters"]
    seed, resamples = params["seed"], params["bootstrap_resamples"]
    for fold, record in weak["folds"].items():
        nd = record["per_query_nDCG@10"]
        for stage, entry in record["first_stages"].items():
            again = against_baseline(nd[stage], stage, resamples=resamples, seed=seed)
            stored = [{k: v for k, v in row.items() if k != "measure"} for row in entry["report"]["tests"]]
            _assert_close(again, stored, f"rerankers_weak {fold}/{stage}")
        key = "{}@{}".format(*params["primary"])
        lesson = lift_difference(nd["bm25"]["bm25"], nd["bm25"][key], nd["dense"]["dense"], nd["dense"][key],
                                 names=("bm25", "dense"), resamples=resamples, seed=seed)
        _assert_close({"variant": key, **lesson}, record["lesson"], f"rerankers_weak {fold} lesson")


def test_the_fusion_study_scores_through_against():
    """``run_fusion.score_set`` asks the scorer for ``Against(rrf_k60)`` over the fusions it tests."""
    from studies.fusion import methods, run_fusion

    runs, qrels = _runs_and_qrels()
    first = sorted(methods.FIRST_STAGES)[0]
    named = {methods.BASELINE: runs["base"], "combsum": runs["better"], first: runs["worse"]}
    block = run_fusion.score_set(SimpleNamespace(resamples=300, seed=4), named, qrels)
    assert block["family"] == {"kind": "against", "baseline": methods.BASELINE, "per": "measure",
                               "correction": "holm", "among": ["combsum"]}
    for m in run_fusion.MEASURES:
        rows = [{k: v for k, v in r.items() if k != "measure"} for r in block["tests"] if r["measure"] == m]
        per_query = {k: block["per_query"][k][m] for k in (methods.BASELINE, "combsum")}
        assert rows == against_baseline(per_query, methods.BASELINE, resamples=300, seed=4)
