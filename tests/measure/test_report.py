"""The typed result of the scorer: orientation of paired tests, verdicts, round trip, old blocks."""

import json
import math
from pathlib import Path

import pytest

from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError
from gabarito.measure.report import ALPHA, SCHEMA, Report
from gabarito.measure.score import score_runs

ROOT = Path(__file__).resolve().parents[2]
QRELS = Qrels.single({"q1": "A", "q2": "B", "q3": "C", "q4": "D"})
GOOD = Run({"q1": [("A", 3.0)], "q2": [("B", 2.0)], "q3": [("C", 1.0)], "q4": [("X", 1.0), ("D", 0.5)]})
BAD = Run({"q1": [("X", 3.0), ("A", 1.0)], "q2": [("Y", 2.0)], "q3": [("Z", 1.0)], "q4": [("D", 1.0)]})


@pytest.fixture(scope="module")
def report():
    return score_runs({"good": GOOD, "bad": BAD}, QRELS, ["R@1", "RR@10"], resamples=300, seed=5)


def test_compare_is_oriented_whichever_way_the_pair_was_stored(report):
    forward, backward = report.compare("good", "bad", "R@1"), report.compare("bad", "good", "R@1")
    assert forward.diff == pytest.approx(0.75 - 0.25) and backward.diff == pytest.approx(-0.5)
    assert forward.ci == (-backward.ci[1], -backward.ci[0])
    assert (forward.wins, forward.losses) == (backward.losses, backward.wins) == (3, 1)
    assert forward.p_holm == backward.p_holm and forward.dz == -backward.dz
    assert (forward.mean_a, forward.mean_b) == (backward.mean_b, backward.mean_a) == (0.75, 0.25)
    assert forward.direction == 1 and backward.direction == -1


def test_verdict_needs_the_holm_p_below_alpha(report):
    c = report.compare("good", "bad", "R@1")
    assert c.alpha == ALPHA
    # four queries cannot make a randomization p below 0.05: the verdict is "same", not "better"
    assert c.p_holm >= ALPHA and c.verdict == "same"
    strong = Report.from_dict({"metrics": {"a": {"m": 1.0}, "b": {"m": 0.0}},
                               "tests": [{"measure": "m", "a": "b", "b": "a", "mean_diff": -1.0, "p_holm": 0.001}]})
    assert strong.compare("a", "b", "m").verdict == "better"
    assert strong.compare("b", "a", "m").verdict == "worse"
    tie = Report.from_dict({"metrics": {"a": {"m": 1.0}, "b": {"m": 1.0}},
                            "tests": [{"measure": "m", "a": "a", "b": "b", "mean_diff": 0.0, "p_holm": 0.0}]})
    assert tie.compare("a", "b", "m").verdict == "same"


def test_a_missing_test_is_an_error_naming_the_pair(report):
    with pytest.raises(GabaritoError, match="'good' against 'good'"):
        report.compare("good", "good", "R@1")
    with pytest.raises(GabaritoError, match="nDCG@10"):
        report.compare("good", "bad", "nDCG@10")


def test_round_trip_and_json(report):
    written = json.loads(json.dumps(report.to_dict()))
    assert written["schema"] == SCHEMA and "ci95" in written
    assert Report.from_dict(written) == report
    assert report.values("good", "R@1") == {"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 0.0}


def test_a_report_of_another_schema_is_refused():
    with pytest.raises(GabaritoError, match="schema"):
        Report.from_dict({"schema": "gabarito.report/99", "metrics": {}})
    with pytest.raises(GabaritoError, match="metrics"):
        Report.from_dict({"tests": []})


def test_best_breaks_ties_by_the_order_given():
    r = Report.from_dict({"metrics": {"a": {"m": 0.5}, "b": {"m": 0.5}, "c": {"m": 0.1}}})
    assert r.best("m") == "a" and r.best("m", among=["b", "a"]) == "b"


def test_comparisons_against_one_method(report):
    rows = report.comparisons("RR@10", against="bad")
    assert [(c.a, c.b) for c in rows] == [("good", "bad")]


def test_reads_the_committed_blocks_of_both_shapes():
    """Blocks as committed (tests as one list of rows naming their measure) and in the older shape
    (a list per measure, as the classic collections were written before the schema): every
    committed row is found both ways round, and both shapes read as the same report."""
    bench = json.loads((ROOT / "case-studies/benchmark_rrf/results.json").read_text())["sets"]["main"]
    r = Report.from_dict(bench)
    row = bench["tests"][0]
    c = r.compare(row["b"], row["a"], row["measure"])
    assert c.diff == -row["mean_diff"] and c.p_holm == row["p_holm"]
    block = json.loads((ROOT / "case-studies/standard_collections/results.json").read_text())["collections"]["adi"]
    by_measure: dict[str, list] = {}
    for t in block["tests"]:
        by_measure.setdefault(t["measure"], []).append({k: v for k, v in t.items() if k != "measure"})
    older = {**block, "tests": by_measure}
    r = Report.from_dict(older)
    assert r == Report.from_dict(block)
    first = by_measure["nDCG@10"][0]
    assert r.compare(first["a"], first["b"], "nDCG@10").diff == first["mean_diff"]
    assert r.interval(first["a"], "nDCG@10") == tuple(block["ci95"][first["a"]]["nDCG@10"])


def test_nan_effect_sizes_still_compare_equal():
    block = {"metrics": {"a": {"m": 1.0}, "b": {"m": 0.0}},
             "tests": [{"measure": "m", "a": "a", "b": "b", "mean_diff": 1.0, "p_holm": 1.0, "dz": math.nan}]}
    assert Report.from_dict(block) == Report.from_dict(block)


def test_a_study_block_is_written_with_the_schema_and_read_back_as_the_report():
    """What a study stores (here the judgments study's score block) is ``Report.to_dict`` with the
    schema, and ``Report.from_dict`` of it is the scorer's report (less the per-query values it
    leaves out)."""
    from dataclasses import replace
    from types import SimpleNamespace

    from studies.judgments import run_judgments

    ctx = SimpleNamespace(seed=11, resamples=200)
    runs = {"good": GOOD, "bad": BAD}
    block = json.loads(json.dumps(run_judgments.score(ctx, runs, QRELS)))
    assert block["schema"] == SCHEMA and block["seed"] == 11 and block["alpha"] == ALPHA
    scored = score_runs({m: r.cut(run_judgments.CUTOFF) for m, r in runs.items()}, QRELS,
                        run_judgments.MEASURES, seed=11, resamples=200)
    assert Report.from_dict(block) == replace(scored, per_query=None)
    assert "order" in block


def test_only_keeps_the_tests_of_one_method():
    r = score_runs({"good": GOOD, "bad": BAD, "other": BAD}, QRELS, ["R@1"], resamples=100, seed=2)
    kept = r.only(tests_with="good")
    assert {(t["a"], t["b"]) for t in kept.tests} == {("good", "bad"), ("good", "other")}
    assert kept.metrics == r.metrics
    two = r.only(["good", "bad"])
    assert list(two.metrics) == ["good", "bad"] and len(two.tests) == 1


def test_one_verdict_rule_for_a_difference_and_its_holm_p():
    from gabarito.measure.report import verdict

    assert verdict(0.04, 0.01) == "better" and verdict(-0.04, 0.01) == "worse"
    assert verdict(0.04, 0.05) == "same" and verdict(0.0, 0.001) == "same"  # p at alpha, or no difference
    assert verdict(0.04, 0.08, alpha=0.1) == "better"
