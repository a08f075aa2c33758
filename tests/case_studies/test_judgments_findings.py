"""The judgments chapter's findings (studies.judgments.findings) on small hand-made results whose
answers are known, and on the committed results.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gabarito.publish.verdicts import p_text
from studies.judgments import findings

STUDY = Path(__file__).resolve().parents[2] / "case-studies" / "judgments"
F = "rrf@10"
METHODS = ["bm25", "vector", F]


def _agreement(kappa, nonzero, n=100, n_nonzero=30):
    return {"n_pairs": n, "linear": {"kappa": kappa}, "unweighted": {"kappa": kappa - 0.02},
            "either_nonzero": {"n_pairs": n_nonzero, "linear": {"kappa": nonzero}, "unweighted": {"kappa": nonzero - 0.03}}}


def _regime(means, order, tests=()):
    """``means``: {method: nDCG@10}."""
    return {"n": 10, "metrics": {m: {"nDCG@10": v} for m, v in means.items()}, "tests": list(tests),
            "order": {"nDCG@10": order}}


def _test(a, b, diff, p_holm):
    return {"measure": "nDCG@10", "a": a, "b": b, "mean_diff": diff, "p_holm": p_holm}


def _set(kappa, nonzero, misses, acceptable, single_order, graded_order, regimes=None, tiebreaks=None):
    return {"agreement": _agreement(kappa, nonzero),
            "acceptable_misses": {"bm25": {"misses": misses, "acceptable": acceptable}},
            "regimes": regimes or {"single": {"order": {"nDCG@10": single_order}},
                                   "graded": {"order": {"nDCG@10": graded_order}}},
            "adjudication_regimes": tiebreaks or {}}


def _results(sets, adjudication=None):
    return {"provenance": {"parameters": {"cutoff": 10}}, "sets": sets,
            "agreement": _agreement(0.875, 0.567, n=8747, n_nonzero=2801),
            "adjudication": adjudication or {"n": 4, "higher": 1, "lower": 3, "between": 0, "outside": 0, "by_kind": {}}}


def test_headline_ranges_cover_every_set_and_count_order_changes():
    res = _results({"a": _set(0.8, 0.6, 4, 1, ["bm25", "vector"], ["bm25", "vector"]),
                    "b": _set(0.9, 0.5, 6, 5, ["bm25", "vector"], ["vector", "bm25"]),
                    "c": _set(0.85, 0.7, 1, 1, ["vector", "bm25"], ["vector", "bm25"])})
    h = findings.headline(res)
    assert (h["kappa_min"], h["kappa_max"]) == (0.8, 0.9)
    assert (h["kappa_nonzero_min"], h["kappa_nonzero_max"]) == (0.5, 0.7)  # the lowest is not the first set's
    assert (h["bm25_misses"], h["bm25_acceptable"]) == (11, 7)
    assert h["order_changed"] == ["b"] and h["sets"] == ["a", "b", "c"]
    assert h["adjudication"] == {"higher": 1, "n": 4}


@pytest.mark.parametrize("kappa, band", [(0.1, "leve"), (0.2, "leve"), (0.35, "razoável"), (0.567, "moderada"),
                                         (0.61, "substancial"), (0.875, "quase perfeita")])
def test_kappa_bands(kappa, band):
    assert findings.kappa_band(kappa) == band


def test_kappa_drop_in_some_sets_or_in_all():
    some = findings.kappa_drop(_results({"a": _set(0.8, 0.6, 1, 0, [], []), "b": _set(0.5, 0.55, 1, 0, [], [])}))
    assert some["fell"] == ["a"] and not some["everywhere"] and some["n_sets"] == 2
    assert some["zeros"] == 8747 - 2801 and some["all"]["band"] == "quase perfeita"
    assert some["nonzero"]["band"] == "moderada"
    every = findings.kappa_drop(_results({"a": _set(0.8, 0.6, 1, 0, [], [])}))
    assert every["everywhere"] and every["fell"] == ["a"]


def test_adjudication_reads_max_leaning_or_neutral():
    def d(higher, n):
        return {"n": n, "higher": higher, "lower": n - higher, "between": 0, "outside": 0,
                "by_kind": {"1-2": {"n": n, "higher": higher, "lower": n - higher, "between": 0, "outside": 0}}}
    assert findings.adjudication(d(9, 10))["kind"] == "max"
    assert findings.adjudication(d(7, 10))["kind"] == "leans"
    out = findings.adjudication(d(3, 8))
    assert out["kind"] == "neutral" and out["share"] == pytest.approx(3 / 8)
    assert out["zero_one"] == {"n": 0, "higher": 0}  # no 0-against-1 disagreement in this round
    assert [(r["low"], r["high"], r["n"]) for r in out["rows"]] == [("1", "2", 8), (None, None, 8)]
    assert findings.adjudication({"n": 0, "higher": 0, "lower": 0, "between": 0, "outside": 0,
                                  "by_kind": {}})["kind"] == "neutral"


def test_regrade_drift_counts_new_grades_above_and_below():
    def v(confusion):
        return {"n": sum(map(sum, confusion)), "same_final_grade": sum(confusion[i][i] for i in range(3)),
                "final": {"confusion": confusion}}
    up = findings.regrade_drift(v([[5, 0, 0], [2, 3, 0], [1, 0, 1]]))  # rows: the new grade
    assert (up["up"], up["down"], up["direction"], up["same"]) == (3, 0, "higher", 9)
    assert findings.regrade_drift(v([[1, 1, 0], [0, 1, 0], [1, 0, 1]]))["direction"] == "mixed"
    assert findings.regrade_drift(v([[1, 2, 0], [0, 1, 0], [0, 0, 1]]))["direction"] == "lower"


def test_fusion_by_regime_judges_against_the_best_single_with_holm():
    regimes = {"single": _regime({"bm25": 0.8, "vector": 0.6, F: 0.8}, METHODS,
                                 [_test("bm25", F, 0.0, 0.5), _test("vector", F, -0.2, 0.001)]),
               "graded": _regime({"bm25": 0.5, "vector": 0.7, F: 0.6}, ["vector", F, "bm25"],
                                 [_test(F, "vector", -0.1, 0.0004), _test(F, "bm25", 0.1, 0.02)])}
    res = _results({"a": _set(0.8, 0.6, 1, 0, [], [], regimes=regimes)})
    out = findings.fusion_by_regime(res, ["single", "graded"])["a"]
    assert (out["single"].single, out["single"].verb) == ("bm25", "empata com")  # tie of singles: the first
    g = out["graded"]
    assert (g.single, g.verb, g.comparison.diff) == ("vector", "perde para", -0.1)
    assert p_text(g.comparison.p_holm) == "p < 0,001"


def test_tiebreak_sensitivity_finds_order_changes_and_the_largest_move():
    def rules(adj, mn, mx):
        return {k: {r: _regime(v, sorted(v, key=v.get, reverse=True)) for r in ("graded", "full")}
                for k, v in (("adjudicated", adj), ("min", mn), ("max", mx))}
    same = {"bm25": 0.5, "vector": 0.6, F: 0.7}
    res = _results({"a": _set(0.8, 0.6, 1, 0, [], [], tiebreaks=rules(same, {"bm25": 0.5, "vector": 0.75, F: 0.7}, same)),
                    "b": _set(0.8, 0.6, 1, 0, [], [], tiebreaks=rules(same, same, same))})
    out = findings.tiebreak_sensitivity(res, METHODS, ["adjudicated", "min", "max"])
    assert out["n_combinations"] == 2 * 2 * 2 and len(out["rows"]) == 2 * 2 * 3
    assert out["order_changed"] == [("a", "graded", "min"), ("a", "full", "min")]
    assert out["largest"]["method"] == "vector" and out["largest"]["diff"] == pytest.approx(0.15)
    assert out["rows"][1]["best"] == "vector"
    calm = findings.tiebreak_sensitivity(_results({"b": res["sets"]["b"]}), METHODS, ["adjudicated", "min", "max"])
    assert calm["order_changed"] == [] and calm["largest"] is None


@pytest.fixture(scope="module")
def committed():
    return json.loads((STUDY / "results.json").read_text(encoding="utf-8"))


def test_headline_is_the_tables_numbers(committed):
    h = findings.headline(committed)
    kappas = [x["agreement"]["linear"]["kappa"] for x in committed["sets"].values()]  # tbl-kappa's rows
    assert (h["kappa_min"], h["kappa_max"]) == (min(kappas), max(kappas))
    nonzero = [x["agreement"]["either_nonzero"]["linear"]["kappa"] for x in committed["sets"].values()]
    assert (h["kappa_nonzero_min"], h["kappa_nonzero_max"]) == (min(nonzero), max(nonzero))
    assert h["bm25_misses"] == sum(x["acceptable_misses"]["bm25"]["misses"] for x in committed["sets"].values())
    assert h["adjudication"]["higher"] == findings.adjudication(committed["adjudication"])["rows"][-1]["higher"]


def test_committed_fusion_tables_agree_with_the_stored_tests(committed):
    out = findings.fusion_by_regime(committed, ["graded"])
    for s, x in committed["sets"].items():
        v = out[s]["graded"]
        t = next(t for t in x["regimes"]["graded"]["tests"]
                 if t["measure"] == "nDCG@10" and {t["a"], t["b"]} == {F, v.single})
        assert v.comparison.p_holm == t["p_holm"]
        assert v.comparison.diff == pytest.approx(x["regimes"]["graded"]["metrics"][F]["nDCG@10"]
                                                  - x["regimes"]["graded"]["metrics"][v.single]["nDCG@10"])


def test_wilson_interval_of_a_share():
    lo, hi = findings.wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(findings.Z95 ** 2 / (10 + findings.Z95 ** 2))
    lo, hi = findings.wilson(5, 10)
    assert lo == pytest.approx(1 - hi) and lo == pytest.approx(0.2366, abs=1e-4)
    assert findings.wilson(0, 0) == (0.0, 1.0)


def test_essential_is_the_tables_numbers(committed):
    e = findings.essential(committed)
    h = findings.headline(committed)
    assert e["n_pairs"] == committed["n_pairs"] and e["order_changed"] == h["order_changed"]
    assert e["kappa_all"]["kappa"] == committed["agreement"]["linear"]["kappa"]
    assert e["kappa_nonzero"]["ci95"] == tuple(committed["agreement"]["either_nonzero"]["linear"]["ci95"])
    assert e["kappa_nonzero"]["band"] == findings.kappa_drop(committed)["nonzero"]["band"]
    b = e["bm25"]
    assert (b["misses"], b["acceptable"]) == (h["bm25_misses"], h["bm25_acceptable"])
    assert b["ci95"][0] < b["share"] < b["ci95"][1]
    first = e["first_set"]
    assert first["set"] == "main" and first["changed"] == ("main" in h["order_changed"])
    graded = committed["sets"]["main"]["regimes"]["graded"]["order"]["nDCG@10"]
    assert graded[first["bm25_graded"] - 1] == "bm25" and first["best_graded"] == graded[0]
    assert first["fusion"] == findings.fusion_by_regime(committed, ["graded"])["main"]["graded"]
    assert e["adjudication"]["n"] == committed["adjudication"]["n"]
    sens = findings.tiebreak_sensitivity(committed, committed["provenance"]["parameters"]["methods"],
                                         ["adjudicated", "min", "max"])
    assert e["tiebreak"] == {"changed": len(sens["order_changed"]), "n": sens["n_combinations"]}


def test_blind_regrade_counts_its_assessors():
    blind = json.loads((STUDY / "blind_regrade.json").read_text(encoding="utf-8"))
    said = findings.blind_regrade(blind)
    assert said["n_assessors"] == len(blind["assessors"]) == 2
    assert findings.blind_regrade({**blind, "assessors": ["A", "B", "C"]})["n_assessors"] == 3
