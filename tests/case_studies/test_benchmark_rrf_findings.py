"""The flagship chapter's findings (studies.benchmark_rrf.findings) on small hand-made results
whose answers are known, and on the committed results.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gabarito.measure.report import Report
from gabarito.publish.verdicts import p_text
from studies.benchmark_rrf import findings

STUDY = Path(__file__).resolve().parents[2] / "case-studies" / "benchmark_rrf"
F = "rrf@10"


def _test(measure, a, b, diff, p_holm, p=None):
    return {"measure": measure, "a": a, "b": b, "mean_diff": diff, "ci_low": diff - 0.1, "ci_high": diff + 0.1,
            "p_randomization": p_holm if p is None else p, "p_holm": p_holm, "wins": 3, "losses": 1, "ties": 6,
            "p_sign": 0.5}


def _set(means, tests, overlap=None, n=10):
    """``means``: {method: (R@1, R@10, RR@10)}; every other measure equals RR@10."""
    metrics = {m: {"R@1": v[0], "R@10": v[1], "RR@10": v[2], "nDCG@10": v[2]} for m, v in means.items()}
    ci = {m: {x: [v - 0.05, v + 0.05] for x, v in ms.items()} for m, ms in metrics.items()}
    return {"n": n, "metrics": metrics, "ci95": ci, "tests": tests,
            "overlap_top1": overlap or {"both": 5, "only_a": 2, "only_b": 1, "neither": 2}}


def _results(**sets):
    return {"provenance": {"parameters": {"k": 10, "deep_k": 100}}, "sets": sets}


def _all_tests(fused_vs, diff=0.0):
    """Tests of the fusion against both singles on the four headline measures."""
    return [_test(x, F, s, diff, p) for x in findings.HEADLINE_MEASURES for s, p in fused_vs.items()]


# -- the fusion's verdicts ---------------------------------------------------------------------

def test_a_fusion_that_never_wins_and_loses_in_one_set():
    word_best = _set({"bm25": (0.9, 1.0, 0.9), "vector": (0.6, 0.9, 0.7), F: (0.8, 1.0, 0.85)},
                     [_test(x, F, "bm25", -0.05, 0.4) for x in findings.HEADLINE_MEASURES]
                     + [_test(x, "vector", F, -0.15, 0.001) for x in findings.HEADLINE_MEASURES])
    meaning_best = _set({"bm25": (0.1, 0.2, 0.15), "vector": (0.5, 0.8, 0.6), F: (0.3, 0.7, 0.4)},
                        [_test(x, F, "vector", -0.2, 0.0001) for x in findings.HEADLINE_MEASURES]
                        + [_test(x, F, "bm25", 0.25, 0.0002) for x in findings.HEADLINE_MEASURES])
    c = findings.across_sets(_results(main=word_best, other=meaning_best))
    assert c["never_wins"] and c["loses_in"] == ["other"]
    assert c["beats_worst"] == list(findings.HEADLINE_MEASURES)
    assert c["best_single"] == {"main": "bm25", "other": "vector"} and c["best_changes"]
    assert (c["by_word"], c["by_meaning"]) == (["main"], ["other"])
    v = c["verdicts"]["main"]["RR@10"]
    assert (v.single, v.verb, v.comparison.diff) == ("bm25", "empata com", -0.05)
    # stored as vector - fusion; read back oriented fusion - vector
    assert c["vs_worst"]["main"]["RR@10"].comparison.diff == pytest.approx(0.15)
    assert c["verdicts"]["other"]["RR@10"].verb == "perde para"
    assert p_text(c["verdicts"]["other"]["RR@10"].comparison.p_holm) == "p < 0,001"


def test_tied_singles_go_to_the_first_and_a_zero_difference_is_a_tie():
    tied = _set({"bm25": (0.5, 0.8, 0.6), "vector": (0.5, 0.8, 0.6), F: (0.5, 0.8, 0.6)},
                _all_tests({"bm25": 0.0001, "vector": 0.0001}))
    c = findings.across_sets(_results(main=tied))
    assert c["best_single"] == {"main": "bm25"} and not c["best_changes"]
    assert c["vs_worst"]["main"]["R@1"].single == "bm25"
    # significant p but no difference: the fusion neither wins nor loses
    assert {v.verdict for v in c["verdicts"]["main"].values()} == {"same"}
    assert c["never_wins"] and c["loses_in"] == [] and c["beats_worst"] == []


def test_paired_rows_orient_each_stored_test_second_minus_first_in_stored_order():
    r = Report.from_dict(_set({"bm25": (0.9, 1.0, 0.9), "vector": (0.6, 0.9, 0.7), F: (0.8, 1.0, 0.85)},
                              [_test("R@1", "bm25", "vector", 0.3, 0.01), _test("nDCG@10", "bm25", F, 0.1, 0.2),
                               _test("R@10", "vector", F, -0.1, 0.3)]))
    rows = findings.paired_rows(r, [{"bm25", "vector"}, {"vector", F}], ("R@1", "R@10"))
    assert [(c.measure, c.a, c.b) for c in rows] == [("R@1", "vector", "bm25"), ("R@10", F, "vector")]
    first = rows[0]
    assert first.diff == pytest.approx(-0.3) and first.ci == pytest.approx((-0.4, -0.2))
    assert (first.wins, first.losses, first.ties) == (1, 3, 6)


# -- the three findings of a set ---------------------------------------------------------------

def test_large_overlap_is_said_large_and_small_overlap_small():
    tests = [_test("RR@10", F, "bm25", 0.0, 0.9)]
    means = {"bm25": (0.9, 1.0, 0.9), "vector": (0.6, 0.9, 0.7), F: (0.8, 1.0, 0.85)}
    big = findings.set_findings(_results(main=_set(means, tests, {"both": 24, "only_a": 12, "only_b": 3, "neither": 1},
                                                   n=40)), "main", ["R@1", "R@10"])
    assert big.shared.large and big.shared.word == "a maioria" and (big.shared.part, big.shared.whole) == (24, 39)
    assert big.exclusive == 15
    small = findings.set_findings(_results(main=_set(means, tests, {"both": 1, "only_a": 12, "only_b": 3, "neither": 4},
                                                     n=20)), "main", ["R@1", "R@10"])
    assert not small.shared.large and small.shared.word == "a minoria" and small.overlap["both"] == 1
    none = findings.set_findings(_results(main=_set(means, tests, {"both": 0, "only_a": 2, "only_b": 3, "neither": 5})),
                                 "main", ["R@1"])
    assert none.shared.word == "nenhuma"


def test_set_findings_count_wins_and_order_the_singles():
    tests = [_test("RR@10", "bm25", F, -0.05, 0.0004, p=0.0001)]
    s = _set({"bm25": (0.5, 0.8, 0.6), "vector": (0.7, 0.8, 0.65), F: (0.8, 0.9, 0.7)}, tests)
    f = findings.set_findings(_results(main=s), "main", ["R@1", "R@10", "RR@10"])
    assert (f.wins, f.n_measures, f.kind) == (3, 3, "all")
    assert (f.first, f.topk) == ("meaning", "tie") and not f.near_all
    assert f.vs_word.diff == pytest.approx(0.05) and p_text(f.vs_word.p) == "p < 0,001"
    never = _set({"bm25": (0.9, 1.0, 0.9), "vector": (0.6, 0.95, 0.7), F: (0.8, 1.0, 0.85)}, tests)
    f = findings.set_findings(_results(main=never), "main", ["R@1", "R@10", "RR@10"])
    assert (f.wins, f.kind, f.first, f.topk, f.near_all) == (0, "none", "word", "word", True)


# -- vocabulary, intervals, latency, versions ----------------------------------------------------

def test_leakage_reading_falls_rises_or_stays():
    def halves(low, high):
        return {"halves": [{"top1": {"bm25": low}}, {"top1": {"bm25": high}}]}
    assert findings.leakage_reading(halves(0.7, 0.95))["kind"] == "falls"
    assert findings.leakage_reading(halves(0.95, 0.7))["kind"] == "rises"
    assert findings.leakage_reading(halves(0.9, 0.9)) == {"kind": "flat", "high": 0.9, "low": 0.9}


def test_interval_widths_skip_a_measure_at_its_ceiling():
    sets = {"a": Report.from_dict({"metrics": {"f": {"R@10": 1.0, "R@1": 0.8}},
                                   "ci95": {"f": {"R@10": [1.0, 1.0], "R@1": [0.7, 0.9]}}}),
            "b": Report.from_dict({"metrics": {"f": {"R@10": 1.0, "R@1": 0.8}},
                                   "ci95": {"f": {"R@10": [1.0, 1.0], "R@1": [0.75, 0.85]}}})}
    w = findings.interval_widths(sets, "f", ["R@10", "R@1"])
    assert w["illustrative"] == "R@1" and w["degenerate"] == ["R@10"]
    assert w["widths"]["R@1"]["a"] == pytest.approx(0.2)
    assert findings.at_ceiling(sets["a"], "f", "R@10") and not findings.at_ceiling(sets["a"], "f", "R@1")


def test_latency_names_the_missed_target_and_the_paradoxes():
    lat = {"encode": {"median": 81.6}, "knn": {"median": 5.0}, "bm25": {"median": 3.0},
           "vector_full": {"median": 65.0}, "hybrid_full": {"median": 90.0},
           "ratio_to_floor": {"bm25": 1.5, "knn": 3.2, "bm25_no_stop": 1.1}}
    out = findings.latency(lat)
    assert out["missed"] == ["knn"] and out["costliest_vector"] == "encode"
    assert out["paradoxes"] == [{"whole": "vector_full", "part": "encode", "whole_median": 65.0, "part_median": 81.6}]
    lat["ratio_to_floor"]["knn"] = findings.FLOOR_TARGET  # at the target is within it
    assert findings.latency(lat)["missed"] == []


def test_versions_stable_or_moving():
    def vs(ranks_by_version, exact, variants=()):
        agree = {v: {"exact": e} for v, e in zip(ranks_by_version, exact)} | {f"var{i}": {"exact": e}
                                                                               for i, e in enumerate(variants)}
        return {"versions": list(ranks_by_version), "published": {"ranks": {"q1": 1, "q2": 2}},
                "runs": {v: {"ranks": r} for v, r in ranks_by_version.items()},
                "comparison": {"agreement": agree}, "field_mapping": {"same_set": True}}
    stable = findings.versions(vs({"1": {"q1": 1, "q2": 3}, "2": {"q1": 1, "q2": 3}}, [1, 1], [1, 2]))
    assert stable["stable"] and stable["exact"] == 1 and stable["moved"] == 0
    assert (stable["n_variants"], stable["best_variant"], stable["unexplained"]) == (2, 2, False)
    moving = findings.versions(vs({"1": {"q1": 1, "q2": 3}, "2": {"q1": 2, "q2": 3}}, [1, 0]))
    assert not moving["stable"] and moving["exact"] is None and moving["moved"] == 1
    assert moving["best_variant"] is None and not moving["unexplained"]


def test_hash_rows_and_generic_targets():
    rows = findings.hash_rows({"files": {"a.json": "x", "b.json": "y"}}, {"gold_sha256": {"a.json": "x"}})
    assert [(r["file"], r["match"], r["measured"]) for r in rows] == [("a.json", True, "x"), ("b.json", False, None)]
    qs = [{"gold": "Trust", F: {"rank": 3}}, {"gold": "Social_Trust", F: {"rank": 1}}, {"gold": "Fear", F: {"rank": None}}]
    gen = findings.generic_targets(qs, F)
    assert [r["gold"] for r in gen["rows"]] == ["Trust", "Fear"] and gen["found"] == 1


# -- the committed results ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def committed():
    return json.loads((STUDY / "results.json").read_text(encoding="utf-8"))


def test_headline_is_the_tables_numbers(committed):
    h = findings.headline(committed)
    main = committed["sets"]["main"]["metrics"]
    assert h["rk"] == {"bm25": main["bm25"]["R@10"], "vector": main["vector"]["R@10"], "fused": main[F]["R@10"]}
    assert h["r1"]["fused"] == main[F]["R@1"] and h["n"] == committed["sets"]["main"]["n"]
    c = findings.across_sets(committed)
    assert {s: v["best_single"] for s, v in h["sets"].items()} == c["best_single"]
    assert h["best_vector_sets"] == c["by_meaning"]


def test_overlap_halves_on_the_committed_results(committed):
    sample = json.loads((STUDY / "sample.json").read_text(encoding="utf-8"))
    v = findings.overlap_halves(committed["sets"]["main"], sample, ["bm25", "vector"])
    assert sum(h["n"] for h in v["halves"]) == committed["sets"]["main"]["n"]
    assert 0 <= v["mean"] <= 1 and v["halves"][0]["overlap"] < v["halves"][1]["overlap"]


def test_the_overlap_sentence_on_the_committed_results_says_large(committed):
    f = findings.set_findings(committed, "main", ["R@1", "R@10"])
    o = committed["sets"]["main"]["overlap_top1"]
    assert f.shared.part == o["both"] and f.shared.large == (o["both"] > f.exclusive)


def test_one_win_one_exclusive_and_an_even_split():
    tests = [_test("RR@10", F, "bm25", 0.0, 0.9)]
    s = _set({"bm25": (0.5, 0.8, 0.6), "vector": (0.4, 0.8, 0.7), F: (0.6, 0.8, 0.65)}, tests,
             {"both": 1, "only_a": 1, "only_b": 0, "neither": 8})
    f = findings.set_findings(_results(main=s), "main", ["R@1", "R@10", "RR@10"])
    assert (f.wins, f.kind) == (1, "some")  # above both on R@1 only; R@10 is a tie with both
    assert f.exclusive == 1 and f.shared.word == "metade" and not f.shared.large
    assert (f.first, f.topk) == ("word", "tie")


# -- the chapter's finding, the reproduction's questions, the latency ----------------------------

def _two_sets():
    word_best = _set({"bm25": (0.9, 1.0, 0.9), "vector": (0.6, 0.9, 0.7), F: (0.8, 1.0, 0.85)},
                     _all_tests({"bm25": 0.4, "vector": 0.001}))
    slightly = _set({"bm25": (0.3, 0.6, 0.4), "vector": (0.35, 0.7, 0.5), F: (0.35, 0.7, 0.45)},
                    _all_tests({"bm25": 0.5, "vector": 0.5}))
    reversed_ = _set({"bm25": (0.0, 0.1, 0.05), "vector": (0.4, 0.8, 0.5), F: (0.1, 0.7, 0.3)},
                     [_test(x, F, "vector", -0.2, 0.001) for x in findings.HEADLINE_MEASURES]
                     + [_test(x, F, "bm25", 0.2, 0.001) for x in findings.HEADLINE_MEASURES])
    return _results(main=word_best, slightly=slightly, reversed=reversed_)


def test_essential_picks_the_set_that_reverses_the_main_set_most_with_its_intervals():
    e = findings.essential(_two_sets())
    assert e["main"]["best_single"] == "bm25" and e["main"]["mean"] == {"bm25": 0.9, "vector": 0.6, "fused": 0.8}
    assert e["main"]["ci"]["fused"] == pytest.approx((0.75, 0.85))
    # both other sets prefer the vector; it leads BM25 by 0.4 in "reversed", 0.05 in "slightly"
    assert e["contrast"]["set"] == "reversed" and e["contrast"]["n"] == 10
    assert [s for s, v in e["loses"]] == ["reversed"] and e["loses"][0][1].verb == "perde para"
    assert e["loses"][0][1].comparison.diff == pytest.approx(-0.2)
    assert e["never_wins"] and e["best_changes"] and e["n_sets"] == 3
    assert (e["by_word"], e["by_meaning"]) == (["main"], ["slightly", "reversed"])


def test_essential_without_a_contrast_when_every_set_has_the_same_best():
    same = _set({"bm25": (0.9, 1.0, 0.9), "vector": (0.6, 0.9, 0.7), F: (0.8, 1.0, 0.85)},
                _all_tests({"bm25": 0.4, "vector": 0.001}))
    e = findings.essential(_results(main=same, other=same))
    assert e["contrast"] is None and e["loses"] == [] and not e["best_changes"]


def test_reproduction_rows_carry_the_published_question_or_stop():
    res = {"reproduction": {"ranks": {"rows": [{"id": "p01", "gold": "A"}, {"id": "p02", "gold": "B"}]}}}
    doc = {"pairs": [{"id": "p02", "question": "second?"}, {"id": "p01", "question": "first?"}]}
    rows = findings.reproduction_rows(res, doc)
    assert [(r["id"], r["gold"], r["question"]) for r in rows] == [("p01", "A", "first?"), ("p02", "B", "second?")]
    with pytest.raises(KeyError, match="p02"):
        findings.reproduction_rows(res, {"pairs": [{"id": "p01", "question": "first?"}]})


def test_latency_is_valid_only_when_the_results_say_so():
    assert not findings.latency_valid({"latency_ms": {"bm25": {"median": 3.0}}})
    assert not findings.latency_valid({})
    assert findings.latency_valid({"latency_ms": {"valid": True}})


def test_essential_and_reproduction_on_the_committed_results(committed):
    e = findings.essential(committed)
    h = findings.headline(committed)
    assert e["main"]["mean"] == h["r1"] and e["main"]["n"] == h["n"]
    assert all(lo <= e["main"]["mean"][m] <= hi for m, (lo, hi) in e["main"]["ci"].items())
    if e["contrast"]:
        assert e["contrast"]["best_single"] != e["main"]["best_single"]
    published = json.loads((STUDY / "questions_published.json").read_text(encoding="utf-8"))
    rows = findings.reproduction_rows(committed, published)
    assert len(rows) == committed["reproduction"]["ranks"]["n"] and all(r["question"] for r in rows)


# -- what the page's tables and sentences read (page_findings) -----------------------------------

def _page_results():
    def block(n, wrong, bands, lost):
        return {"n": n, "gold_file": f"g{n}.json",
                "leakage": {"expected": {"n": n, "mean": 0.5, "zero": 1}, "wrong": wrong, "wrong_higher": 2,
                            "recall1_by_band": bands},
                "lost_by_fusion": lost, "ann": {"k": 10, "n_queries": n, "mean": 0.9, "min": 0.5, "perfect": n - 1},
                "per_question": [{"id": "q1", "question": "what?", "gold": "Trust",
                                  "bm25": {"rank": 1, "top": ["Trust"]}, "vector": {"rank": None, "top": ["Fear"]},
                                  "rrf@10": {"rank": 2}, "rrf@100": {"rank": 1}}]}
    bands = {m: [{"lo": 0.0, "hi": 0.5, "n": 3, "mean": v}, {"lo": 0.5, "hi": 0.75, "n": 0, "mean": None},
                 {"lo": 0.75, "hi": 1.0, "n": 2, "mean": v / 2}] for m, v in (("bm25", 0.6), ("vector", 0.4))}
    return {"provenance": {"parameters": {"k": 10, "deep_k": 100, "rrf_k": 60, "bootstrap_resamples": 1000,
                                          "text_fields": ("name", "description"), "ties": {"code": "t"}},
                           "date": "2026-01-02", "machine": {"cpu": "x"},
                           "engine": {"version": "25.1 (build abc)", "mode": {"code": "m"}},
                           "model": {"model_id": "e5", "dim": 384, "weights_sha256": "ab", "origin": "hub"},
                           "corpus": {"name": "SA", "n_docs": 90, "file": "sa.syn", "sha256": "cd"},
                           "gold_sha256": {"g.json": "h1"}},
            "methods": ["bm25", "vector", "rrf@10", "rrf@100"],
            "queries": {"ddl": ["CREATE A", "CREATE B"], "bm25": "SELECT 1", "knn": "SELECT 2", "rrf_python": "def f(): ..."},
            "sets": {"main": block(40, {"mean": 0.0}, bands, {"rrf@10": ["q1"], "rrf@100": []}),
                     "extended": block(20, None, bands, {"rrf@10": [], "rrf@100": ["q2", "q3"]})},
            "reproduction": {"source": {"title": "T", "section": "S",
                                        "published_run": {"date": "2025-12-01", "engine": "ArcadeDB 24, embedded"}},
                             "ranks": {"n": 40, "agree": {"bm25": 30, "vector": 38, "rrf": 35}, "cutoff": 10},
                             "metrics": [{"method": "rrf", "ours_method": "rrf@10", "measure": "R@1", "published": 0.3,
                                          "ours": 0.35, "ci95": [0.2, 0.5], "inside": True}],
                             "inside": 1, "n_metrics": 1},
            "latency_ms": {"valid": True, "bm25": {"median": 1.5, "p95": 3.0}, "ratio_to_floor": {"bm25": 2.0},
                           "knn": {"median": 2.5}}}


def test_page_measurement_and_set_rows():
    from studies.benchmark_rrf import page_findings as pf

    res = _page_results()
    m = pf.measurement(res)
    assert (m["k"], m["deep_k"], m["rrf_k"], m["resamples"]) == (10, 100, 60, 1000)
    assert m["engine_version"] == "25.1" and m["text_fields"] == ["name", "description"]
    assert (m["corpus_name"], m["n_docs"], m["model_id"], m["dim"]) == ("SA", 90, "e5", 384)
    main, ext = pf.set_rows(res)
    assert (main["set"], main["n"], main["gold_file"], main["leakage"], main["leakage_zero"]) == ("main", 40, "g40.json", 0.5, 1)
    assert main["wrong_mean"] == 0.0 and ext["wrong_mean"] is None   # a wrong mean of 0 is shown, a missing one is not
    assert [m for m in pf.singles(res)] == ["bm25", "vector"]


def test_page_leakage_bands_skip_empty_bands_and_close_the_last():
    from studies.benchmark_rrf import page_findings as pf

    rows = pf.leakage_bands(_page_results(), ["bm25", "vector"])
    assert [(r["set"], r["lo"], r["closed"]) for r in rows] == [("main", 0.0, False), ("main", 0.75, True),
                                                                ("extended", 0.0, False), ("extended", 0.75, True)]
    assert rows[1]["top1"] == {"bm25": 0.3, "vector": 0.2} and rows[1]["n"] == 2


def test_page_questions_lost_ann_reproduction_queries_latency():
    from studies.benchmark_rrf import page_findings as pf

    res = _page_results()
    (q,) = pf.question_rows(res, "main", ["bm25", "vector", "rrf@100"])
    assert q == {"question": "what?", "gold": "Trust", "ranks": {"bm25": 1, "vector": None, "rrf@100": 1}}
    assert [r["id"] for r in pf.shone_alone_in(res, "main", "bm25", "vector")] == ["q1"]
    assert pf.shone_alone_in(res, "main", "vector", "bm25") == []
    assert pf.generic_targets_in(res, "main", "vector")["found"] == 0
    assert pf.lost_by_fusion(res, "main") == (["q1"], []) and pf.lost_by_fusion(res, "extended") == ([], ["q2", "q3"])
    assert pf.ann_rows(res, ["extended"]) == [{"set": "extended", "n_queries": 20, "mean": 0.9, "min": 0.5, "perfect": 19}]
    r = pf.reproduction(res)
    assert (r["engine"], r["n"], r["agree"]["rrf"], r["cutoff"], r["inside"]) == ("ArcadeDB 24", 40, 35, 10, 1)
    assert r["metrics"][0]["single"] == "fused" and r["metrics"][0]["ci95"] == [0.2, 0.5]
    assert pf.stored_queries(res)["ddl"] == "CREATE A;\nCREATE B"
    assert pf.latency_medians(res) == [("bm25", 1.5), ("knn", 2.5)]
    assert pf.gold_hash_rows(res, {"files": {"g.json": "h1", "o.json": "h2"}}) == [
        {"file": "g.json", "frozen": "h1", "measured": "h1", "match": True},
        {"file": "o.json", "frozen": "h2", "measured": None, "match": False}]


def test_page_findings_on_the_committed_results(committed):
    from studies.benchmark_rrf import page_findings as pf

    rows = pf.set_rows(committed)
    assert [r["set"] for r in rows] == list(findings.reports(committed))
    h = findings.headline(committed)
    assert (rows[0]["n"], rows[1]["n"]) == (h["n"], h["n_extended"])
    assert len(pf.singles(committed)) == 2
    assert len(pf.question_rows(committed, "main", ["bm25"])) == h["n"]
    assert pf.reproduction(committed)["n_metrics"] == len(pf.reproduction(committed)["metrics"])


def test_page_vocabulary_measures_are_the_two_tables(committed):
    from studies.benchmark_rrf import page_findings as pf

    sample = json.loads((STUDY / "sample.json").read_text(encoding="utf-8"))
    v = pf.vocabulary_measures(committed, {"main": sample}, ["bm25", "vector"])
    assert list(v) == ["overlap", "leakage"]
    assert v["overlap"]["main"] == findings.overlap_halves(committed["sets"]["main"], sample, ["bm25", "vector"])
    assert v["leakage"] == pf.leakage_bands(committed, ["bm25", "vector"])


def test_the_frozen_inputs_and_the_version_rows_are_what_the_files_hold():
    import json
    from pathlib import Path

    from studies.benchmark_rrf import page_findings as PF

    base = Path(__file__).resolve().parents[2] / "case-studies" / "benchmark_rrf"
    got = PF.frozen_inputs(base)
    sample = json.loads((base / "sample.json").read_text(encoding="utf-8"))
    assert got["sample"] == {"n": sample["n"], "seed": sample["seed"]} and sample["n"] == len(sample["concepts"])
    assert got["frozen_at"] == json.loads((base / "gold.lock.json").read_text(encoding="utf-8"))["frozen_at"]
    assert sorted(got["protocols"]) == sorted(PF.PROTOCOL_SETS) and all(got["protocols"].values())
    vs = {"versions": ["a", "b"], "comparison": {"agreement": {"a": {"exact": 30}, "b": {"exact": 31}, "x": {"exact": 1}}},
          "versus_newest": {"a": {"identical_top10": 9, "max_rel_score_diff": 1e-7},
                            "b": {"identical_top10": 10, "max_rel_score_diff": 0.0}},
          "runs": {"a": {"settings": {"mode": "embedded"}}, "b": {"settings": {"mode": "server"}}}}
    assert [(r["version"], r["mode"], r["exact"], r["identical_top10"]) for r in PF.version_rows(vs)] == \
        [("a", "embedded", 30, 9), ("b", "server", 31, 10)]  # a load variant ("x") is not a version
