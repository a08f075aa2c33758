"""studies.fusion.findings: hand-made results (orientation, ties, a method that never wins, a p
below the display floor, one set or several) and the committed results (headline = tables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gabarito.publish import formatting as fmt
from gabarito.publish.verdicts import p_text
from studies.fusion import findings

REPO = Path(__file__).resolve().parents[2]
METHODS = ("rrf_k1", "rrf_k10", "rrf_k60", "rrf_k100", "linear_cv", "dbsf")


def _test(a, b, diff, p_holm, *, mean_a=0.5, mean_b=0.5):
    return {"a": a, "b": b, "mean_a": mean_a, "mean_b": mean_b, "mean_diff": diff, "ci_low": diff - 0.01,
            "ci_high": diff + 0.01, "dz": diff * 10, "p_randomization": p_holm, "wins": 3, "losses": 1, "ties": 0,
            "p_sign": p_holm, "p_holm": p_holm}


def _set(n, means, tests, *, differ=0, explained=0, gap=1e-9):
    return {"n": n, "gold_file": "g.json",
            "metrics": {m: {"nDCG@10": v} for m, v in means.items()},
            "ci95": {m: {"nDCG@10": [v - 0.1, v + 0.1]} for m, v in means.items()},
            "tests": {"nDCG@10": tests},
            "identity": {"n": n, "identical_full": n - differ, "identical_top10": n, "differ": differ,
                         "explained": explained, "causes": {"input_ties": explained, "unexplained": differ - explained},
                         "arithmetic": {"identical_to_server_lists": n, "max_relative_score_gap": gap},
                         "differences": [{"cause": "unexplained", "tie_at_cut": False, "qid": "q1"}] * (differ - explained)},
            "dbsf_agreement": {"identical_top10": n, "n": n},
            "tuning": {}}


def _results(sets: dict, latency=None):
    corpora = {}
    for (corpus, key), s in sets.items():
        corpora.setdefault(corpus, {"record": {"n_docs": 10}, "sets": {}, "latency_ms": None})["sets"][key] = s
    if latency:
        corpora[next(iter(corpora))]["latency_ms"] = latency
    return {"provenance": {"parameters": {"corpora": list(corpora), "baseline": "rrf_k60", "rrf_ks": [1, 10, 60, 100],
                                          "depth": 100, "cutoff": 10}},
            "corpora": corpora, "measures": ["nDCG@10"]}


BASE_MEANS = {"rrf_k1": 0.50, "rrf_k10": 0.55, "rrf_k60": 0.55, "rrf_k100": 0.40, "linear_cv": 0.60, "dbsf": 0.45}


@pytest.fixture
def two_sets():
    one = _set(1, BASE_MEANS, [
        _test("rrf_k1", "rrf_k60", -0.05, 0.5), _test("rrf_k10", "rrf_k60", 0.0, 1.0),
        _test("rrf_k100", "rrf_k60", -0.15, 0.01),
        _test("linear_cv", "rrf_k60", 0.05, 1e-5),                    # p below the display floor
        _test("rrf_k60", "dbsf", 0.10, 0.2)])                          # stored the other way round
    several = _set(40, {**BASE_MEANS, "linear_cv": 0.45, "dbsf": 0.45}, [
        _test("rrf_k1", "rrf_k60", -0.05, 0.5), _test("rrf_k10", "rrf_k60", 0.0, 1.0),
        _test("rrf_k100", "rrf_k60", -0.15, 0.3),
        _test("linear_cv", "rrf_k60", -0.10, 0.04), _test("dbsf", "rrf_k60", 0.0, 1.0)],
        differ=3, explained=2, gap=2e-6)
    return _results({("adi", "adi"): one, ("social", "main"): several})


def test_against_baseline_orients_every_test_as_method_minus_baseline(two_sets):
    tests = findings.against_baseline(two_sets, two_sets["corpora"]["adi"]["sets"]["adi"], "nDCG@10")
    assert tests["dbsf"].diff == pytest.approx(-0.10) and tests["dbsf"].b == "rrf_k60"
    assert tests["dbsf"].ci == pytest.approx((-0.11, -0.09))
    assert findings.tested(two_sets, "nDCG@10") == ["rrf_k1", "rrf_k10", "rrf_k100", "linear_cv", "dbsf"]


def test_comparison_rows_best_significance_and_a_method_that_never_wins(two_sets):
    one, several = findings.comparison_rows(two_sets)
    assert one["best"] == "linear_cv" and one["significant"] and one["above"] == ["linear_cv"]
    assert one["below"] == ["rrf_k100"] and one["baseline"] == 0.55 and one["best_value"] == 0.60
    assert p_text(one["p_holm"]) == "p < 0,001"
    # rrf_k10 and dbsf tie on the largest difference (0.0): the alphabetically last name is taken
    assert several["best"] == "rrf_k10" and not several["significant"]
    assert several["below"] == ["linear_cv"] and several["above"] == []
    # dbsf never beats the baseline, in either set
    assert all("dbsf" not in r["above"] for r in (one, several))
    v = findings.verdicts(two_sets)
    assert v["n_sets"] == 2 and [r["set"] for r in v["better_sets"]] == ["adi"]
    assert [r["set"] for r in v["worse_sets"]] == ["adi", "main"]
    assert [r["set"] for r in v["best_significant"]] == ["adi"]


def test_one_question_or_several_are_written_with_the_right_number(two_sets):
    one, several = findings.comparison_rows(two_sets)
    assert fmt.plural(one["n"], "pergunta", "perguntas") == "1 pergunta"
    assert fmt.plural(several["n"], "pergunta", "perguntas") == "40 perguntas"


def test_k_rows_tie_goes_to_the_k_nearest_the_baseline(two_sets):
    rows = findings.k_rows(two_sets)
    assert rows[0]["values"] == {1: 0.50, 10: 0.55, 60: 0.55, 100: 0.40}
    assert rows[0]["best_k"] == 60 and rows[0]["spread"] == pytest.approx(0.15)
    assert rows[0]["significant"] == [100] and rows[1]["significant"] == []
    s = findings.k_summary(two_sets)
    assert s["baseline_k"] == 60 and s["baseline_best"] == 2 and s["n"] == 2
    assert [r["set"] for r in s["significant"]] == ["adi"]


def test_identity_totals_and_unexplained(two_sets):
    tot = findings.identity_totals(two_sets)
    assert tot["n"] == 41 and tot["differ"] == 3 and tot["explained"] == 2 and not tot["all_explained"]
    assert tot["max_relative_score_gap"] == 2e-6 and not tot["gap_below_floor"]
    assert [(c, k) for c, k, _ in findings.unexplained(two_sets)] == [("social", "main")]
    clean = _results({("adi", "adi"): _set(5, BASE_MEANS, [], differ=2, explained=2)})
    t = findings.identity_totals(clean)
    assert t["all_explained"] and t["gap_below_floor"] and findings.unexplained(clean) == []


def _lat(valid, peak):
    stage = {"median": 1.0, "p95": 2.0}
    return {"stages_ms": {s: stage for s in ("http_floor", "bm25", "knn", "python", "native")},
            "ratio_python_over_native": {"median": 1.5, "p95": 2.0}, "valid": valid, "peak_load_1min": peak,
            "max_load": 1.0, "cpu_count": 2, "load_before": {"1min": 0.5}, "load_after": {"1min": peak}}


def test_headline_and_latency(two_sets):
    two_sets["corpora"]["adi"]["latency_ms"] = {"10": _lat(True, 0.5), "100": _lat(False, 1.7)}
    h = findings.headline(two_sets)
    assert (h["n_sets"], h["better"], h["worse"], h["baseline_k"], h["cutoff"]) == (2, 1, 2, 60, 10)
    assert h["latency"]["depth"] == 100 and not h["latency_valid"]
    lat = findings.latency_summary(two_sets)
    assert len(lat["rows"]) == 2 and len(lat["invalid"]) == 1 and lat["peak_load"] == 1.7
    assert lat["figure"]["depth"] == 100
    alone = _results({("adi", "adi"): _set(1, BASE_MEANS, [_test("dbsf", "rrf_k60", 0.0, 1.0)])})
    assert findings.headline(alone)["latency"] is None and findings.headline(alone)["latency_valid"]


def test_committed_headline_equals_the_tables():
    from gabarito.publish.provenance import load_results

    res = load_results(REPO / "case-studies" / "fusion")
    h = findings.headline(res)
    rows = findings.identity_rows(res)
    assert h["identity"]["n"] == sum(r["n"] for r in rows)
    assert h["identity"]["identical_full"] == sum(r["identical_full"] for r in rows)
    table = findings.comparison_rows(res)
    assert h["better"] == sum(bool(r["above"]) for r in table) and h["n_sets"] == len(table)
    assert h["worse"] == sum(bool(r["below"]) for r in table)
    for r in table:   # the bold cells of the table are the significant comparisons, and they decide the headline
        assert r["above"] == sorted(m for m, c in r["tests"].items() if c.significant and c.diff > 0)
    lat = [r for r in findings.latency_rows(res) if r["depth"] == res["provenance"]["parameters"]["depth"]]
    assert h["latency"] == (lat[0] if lat else None)


def test_essentials_split_the_sets_where_a_fusion_wins_from_the_others(two_sets):
    for (corpus, key), (bm25, dense) in {("adi", "adi"): (0.2, 0.6), ("social", "main"): (0.5, 0.4)}.items():
        metrics = two_sets["corpora"][corpus]["sets"][key]["metrics"]
        metrics["bm25"], metrics["dense"] = {"nDCG@10": bm25}, {"nDCG@10": dense}
    e = findings.essentials(two_sets)
    assert (e["n_sets"], e["baseline_k"], e["n_tested"]) == (2, 60, 5)
    (exc,) = e["exceptions"]
    assert (exc["set"], exc["best"], exc["best_single"]) == ("adi", "linear_cv", "dense")
    assert exc["singles"] == {"bm25": 0.2, "dense": 0.6} and exc["baseline_below_best_single"]   # 0.55 < 0.6
    assert exc["best_is_weighted"]
    assert [r["set"] for r in e["others"]] == ["main"] and e["others_top"]["set"] == "main"
    assert [r["set"] for r in e["k_steady"]] == ["main"] and e["k_steady_spread"] == pytest.approx(0.15)
    assert e["identity"] == findings.identity_totals(two_sets)


def test_essentials_with_no_exception_and_no_steady_k(two_sets):
    del two_sets["corpora"]["adi"]
    two_sets["provenance"]["parameters"]["corpora"] = ["social"]
    e = findings.essentials(two_sets)
    assert e["exceptions"] == [] and [r["set"] for r in e["others"]] == ["main"]
    assert e["k_steady_spread"] == pytest.approx(0.15)
    lat = findings.latency_summary(two_sets)
    assert lat["valid"] == [] and lat["rows"] == []


def test_committed_essentials_agree_with_the_headline():
    from gabarito.publish.provenance import load_results

    res = load_results(REPO / "case-studies" / "fusion")
    h, e = findings.headline(res), findings.essentials(res)
    assert len(e["exceptions"]) == h["better"] and len(e["exceptions"]) + len(e["others"]) == h["n_sets"]
    assert all(not r["significant"] or r["diff"] <= 0 for r in e["others"])
    lat = findings.latency_summary(res)
    assert lat["valid"] == [r for r in lat["rows"] if r["valid"]]


def test_page_rows_bars_and_parameters(two_sets):
    two_sets["corpora"]["social"]["record"]["n_docs"] = 99
    two_sets["provenance"]["parameters"]["limit"] = None
    assert findings.run_limit(two_sets) is None
    two_sets["provenance"]["parameters"]["limit"] = 5
    assert findings.run_limit(two_sets) == 5
    assert findings.set_rows(two_sets) == [
        {"corpus": "adi", "set": "adi", "n_docs": 10, "n": 1, "gold_file": "g.json"},
        {"corpus": "social", "set": "main", "n_docs": 99, "n": 40, "gold_file": "g.json"}]
    b = findings.bars(two_sets, ["linear_cv", "rrf_k60"])
    assert list(b) == ["linear_cv", "rrf_k60"]
    assert b["linear_cv"]["means"] == [0.60, 0.45]
    assert b["linear_cv"]["ci"] == [pytest.approx([0.5, 0.7]), pytest.approx([0.35, 0.55])]
    kb = findings.k_bars(two_sets)
    assert [(r["k"], r["method"]) for r in kb] == [(1, "rrf_k1"), (10, "rrf_k10"), (60, "rrf_k60"), (100, "rrf_k100")]
    assert kb[3]["means"] == [0.40, 0.40]
    for c, k, s in findings.sets(two_sets):
        s["metrics"]["bm25"] = s["metrics"]["dense"] = {"nDCG@10": 0.1}
    e = findings.essentials(two_sets)
    assert e["cutoff"] == 10 and e["other_ks"] == [1, 10, 100]


def test_first_stages_each_once_in_order(two_sets):
    for corpus, names in {"adi": ["bm25", "dense"], "social": ["bm25", "dense", "splade"]}.items():
        two_sets["corpora"][corpus]["retrievers"] = {"first_stages": [{"name": n} for n in names]}
    assert findings.first_stages(two_sets) == ["bm25", "dense", "splade"]


def test_other_verdicts_skip_the_page_measure(two_sets):
    two_sets["measures"] = ["nDCG@10", "RR@10"]
    for s in (two_sets["corpora"]["adi"]["sets"]["adi"], two_sets["corpora"]["social"]["sets"]["main"]):
        s["tests"]["RR@10"] = [dict(t) for t in s["tests"]["nDCG@10"]]
        for m in s["metrics"]:
            s["metrics"][m]["RR@10"] = s["metrics"][m]["nDCG@10"]
            s["ci95"][m]["RR@10"] = s["ci95"][m]["nDCG@10"]
    (v,) = findings.other_verdicts(two_sets)
    assert v["measure"] == "RR@10" and v == findings.verdicts(two_sets, "RR@10") | {"measure": "RR@10"}
    assert [r["set"] for r in v["better_sets"]] == ["adi"]
    assert findings.other_verdicts(two_sets, "RR@10")[0]["measure"] == "nDCG@10"


def test_committed_page_rows():
    from gabarito.publish.provenance import load_results

    res = load_results(REPO / "case-studies" / "fusion")
    assert findings.first_stages(res) == ["bm25", "dense"]
    rows = findings.set_rows(res)
    assert [(r["corpus"], r["set"]) for r in rows] == findings.set_keys(res)
    assert all(r["n_docs"] > 0 and r["n"] > 0 for r in rows)
    assert [b["k"] for b in findings.k_bars(res)] == [1, 10, 60, 100]
