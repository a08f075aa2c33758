"""No statistic computed while the site builds (issue 40, item 2): the reranking headline's Holm
and intervals, and the longer-trained reader's tests (``budget_rows``), are read from what the
studies stored (their ``statistics``, added to the committed files by ``--statistics-only``); the
stored numbers are exactly what the pages computed before (that computation is written out here),
and results without them are one line, never a computation.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.measure import stats
from gabarito.measure.families import Across, family_from_dict
from gabarito.study.claims import check_family, holm_family, parse_claims
from studies.reranking import findings as PA
from studies.standard_collections import reranker_findings as RA

ROOT = Path(__file__).resolve().parents[2]
RERANKING = ROOT / "case-studies" / "reranking"
CLASSIC = ROOT / "case-studies" / "standard_collections"


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# --- the reranking headline ------------------------------------------------------------------------

def test_the_headline_holm_on_the_committed_results_is_what_the_page_showed():
    res = _load(RERANKING / "results.json")
    assert all("p_holm" in h for h in res["headline"])  # stored by the study
    hl = PA.headline(res)
    before = stats.holm({i: h["cutoff1"]["p"] for i, h in enumerate(res["headline"])})  # the page-time Holm
    assert [r["p_holm"] for r in hl["rows"]] == [before[i] for i in range(len(res["headline"]))]
    assert PA.headline_holm(res["headline"]) == [r["p_holm"] for r in hl["rows"]]
    family = PA.headline_family(res["headline"])
    assert len(family.members) == len(res["headline"]) == 20 and family.p == ("cutoff1", "p")


def test_the_headline_reads_the_holm_the_study_stored():
    res = _load(RERANKING / "results.json")
    computed = PA.headline(res)
    stored = copy.deepcopy(res)  # what run_rerank.py writes
    for row, p in zip(stored["headline"], PA.headline_holm(stored["headline"])):
        row["p_holm"] = p
    stored["headline_family"] = PA.headline_family(stored["headline"]).to_dict()
    assert stored == res  # the committed file holds exactly that
    assert PA.headline(stored) == computed
    assert family_from_dict(stored["headline_family"]) == PA.headline_family(res["headline"])
    # once stored, the declared family can be checked number by number, not only by size
    declared = parse_claims(_load(RERANKING / "study.json")["claims"], RERANKING / "study.json")["results.json"]
    fam = declared.family(PA.HEADLINE_FAMILY)
    assert check_family(stored, replace(fam, computed="results")) == []
    stored["headline"][0]["p_holm"] = 0.0  # the findings read the stored value, never recompute it
    assert PA.headline(stored)["rows"][0]["p_holm"] == 0.0


def test_the_hit1_intervals_are_read_as_stored_and_equal_the_computation():
    res = _load(RERANKING / "results.json")
    computed = PA.compute_hit1_reports(res)
    stored = json.loads(json.dumps({**res, "hit1_intervals": computed}))  # what run_rerank.py writes, through JSON
    assert stored["hit1_intervals"] == res["hit1_intervals"]  # and what the committed file holds
    read = PA.hit1_intervals(stored)
    for r, block in zip(read, computed):  # each row is its Report: means, intervals, the paired difference
        report = block["report"]
        assert (r["first_stage"], r["reader"], r["before"], r["after"]) == \
            (block["first_stage"], block["reader"], report["metrics"][r["first_stage"]]["hit@1"],
             report["metrics"][block["reading"]]["hit@1"])
        assert r["ci_diff"] == [report["tests"][0]["ci_low"], report["tests"][0]["ci_high"]]
    first = stored["hit1_intervals"][0]["report"]["tests"][0]
    first["ci_low"], first["ci_high"] = 9.0, 9.0  # the findings read the stored value, never recompute it
    assert PA.hit1_intervals(stored)[0]["ci_diff"] == [9.0, 9.0]
    assert PA.essential(stored)["n"] == PA.essential(res)["n"]


def test_the_hit1_reports_give_the_intervals_and_sign_tests_the_chapter_always_showed():
    """The Reports reproduce, bit for bit, the intervals stored before them (one shared bootstrap
    draw of every series, then) and each row's exact sign test is the headline's ``cutoff1`` p."""
    res = _load(RERANKING / "results.json")
    before = [{"first_stage": "bm25", "reader": "bi-encoder mpnet", "n": 73, "before": 0.4931506849315068,
               "after": 0.3972602739726027, "diff": -0.0958904109589041,
               "ci_before": [0.3835616438356164, 0.6027397260273972], "ci_after": [0.2876712328767123, 0.5068493150684932],
               "ci_diff": [-0.2191780821917808, 0.0273972602739726]}]  # the committed file of 2026-12-07, first row
    assert PA.hit1_intervals(res)[:1] == before
    for block, h in zip(res["hit1_intervals"], res["headline"]):
        assert block["report"]["tests"][0]["p_sign"] == h["cutoff1"]["p"]


# --- the reader trained longer (rerankers_budget.json against rerankers.json) -------------------------

def _page_time_budget_rows(base: dict, more: dict) -> list[dict]:
    """What ``budget_rows`` computed while the site built, before the study stored its tests."""
    seed = more["provenance"]["parameters"]["seed"]
    out = []
    for held, f in more["folds"].items():
        b = base["folds"][held]
        for stage in RA.STAGES:
            sb, sm = b["first_stages"][stage], f["first_stages"][stage]
            key = RA.variant(stage, RA.HEADLINE_N)
            t = stats.compare_methods({"longer": sm[f"per_query_{RA.MEASURE}"][key],
                                       "baseline": sb[f"per_query_{RA.MEASURE}"][key]}, seed=seed)[0]
            out.append({"held_out": held, "stage": stage, "n": RA.HEADLINE_N, "alone": sb["metrics"][stage][RA.MEASURE],
                        "baseline": sb["metrics"][key][RA.MEASURE], "longer": sm["metrics"][key][RA.MEASURE],
                        "diff": t["mean_diff"], "p": t["p_randomization"], "better": t["wins"], "worse": t["losses"]})
        fold_rows = [r for r in out if r["held_out"] == held]
        adjusted = stats.holm({r["stage"]: r["p"] for r in fold_rows})
        for r in fold_rows:
            r["p_holm"] = adjusted[r["stage"]]
    return out


def test_budget_rows_on_the_committed_files_are_what_the_page_showed():
    base, more = _load(CLASSIC / "rerankers.json"), _load(CLASSIC / "rerankers_budget.json")
    assert RA.BUDGET_TESTS in more  # stored by the study
    assert RA.budget_rows(base, more) == _page_time_budget_rows(base, more)


def test_budget_rows_read_the_tests_the_study_stored():
    base, more = _load(CLASSIC / "rerankers.json"), _load(CLASSIC / "rerankers_budget.json")
    params = more["provenance"]["parameters"]
    tests = RA.budget_tests(base, more["folds"], seed=params["seed"], resamples=params["bootstrap_resamples"])
    for held, entry in tests.items():
        family = family_from_dict(entry["family"])
        assert isinstance(family, Across) and family.members == RA.STAGES
        assert sorted(entry["tests"]) == sorted(RA.STAGES)
    # as train_budget.py writes it, and as the committed file holds it
    stored = {**json.loads(json.dumps(more)), RA.BUDGET_TESTS: json.loads(json.dumps(tests))}
    assert stored == more
    assert RA.budget_rows(base, stored) == RA.budget_rows(base, more)
    stored[RA.BUDGET_TESTS]["cranfield"]["tests"]["bm25"]["p_holm"] = 0.5
    assert RA.budget_rows(base, stored)[0]["p_holm"] == 0.5  # read, not recomputed


# --- results written before a study stored its statistics ------------------------------------------

def test_results_without_their_stored_statistics_are_one_line_never_a_computation():
    from gabarito.errors import GabaritoError
    from studies.judgments import findings as JF
    from studies.standard_collections import weak_findings as WF

    res, base = _load(RERANKING / "results.json"), _load(CLASSIC / "rerankers.json")
    more, weak = _load(CLASSIC / "rerankers_budget.json"), _load(CLASSIC / "rerankers_weak.json")
    judged = _load(ROOT / "case-studies" / "judgments" / "results.json")
    cases = [(lambda: PA.hit1_intervals({k: v for k, v in res.items() if k != "hit1_intervals"}), "hit1_intervals"),
             (lambda: PA.headline({**res, "headline": [{k: v for k, v in h.items() if k != "p_holm"}
                                                       for h in res["headline"]]}), "p_holm"),
             (lambda: RA.budget_rows(base, {k: v for k, v in more.items() if k != RA.BUDGET_TESTS}), RA.BUDGET_TESTS),
             (lambda: WF.rows({k: v for k, v in weak.items() if k != WF.PRIMARY_HOLM}), WF.PRIMARY_HOLM),
             (lambda: JF.essential({k: v for k, v in judged.items() if k != JF.ACCEPTABLE}), JF.ACCEPTABLE)]
    for call, key in cases:
        with pytest.raises(GabaritoError, match=f"no stored '{key}'.*--statistics-only"):
            call()


def test_the_weak_readers_and_judgments_store_what_their_pages_computed():
    from studies.judgments import findings as JF
    from studies.standard_collections import weak_findings as WF

    weak = _load(CLASSIC / "rerankers_weak.json")
    family = WF.primary_family()
    page_time = {k: p for group in holm_family(weak, family).values() for k, p in group.items()}
    assert weak[WF.PRIMARY_HOLM] == {"family": family.name, "p_holm": page_time}
    assert WF.primary_p(weak) == WF.primary_p(weak, family)
    judged = _load(ROOT / "case-studies" / "judgments" / "results.json")
    h = JF.headline(judged)
    bm25 = judged[JF.ACCEPTABLE]["bm25"]
    assert (bm25["misses"], bm25["acceptable"]) == (h["bm25_misses"], h["bm25_acceptable"])
    assert tuple(bm25["ci95"]) == stats.wilson(h["bm25_acceptable"], h["bm25_misses"])
    assert judged[JF.ACCEPTABLE] == json.loads(json.dumps(JF.compute_acceptable(judged)))


def test_a_quick_weak_run_on_one_collection_stores_an_incomplete_family_and_its_page_says_so():
    """``train_weak_rerankers.py --folds adi`` (its documented quick run) holds 2 of the declared 10
    primary comparisons: the study stores no Holm p for them, and a page reading it stops in one line."""
    from studies.standard_collections import weak_findings as WF

    weak = _load(CLASSIC / "rerankers_weak.json")
    quick = {**weak, "folds": {k: v for k, v in weak["folds"].items() if k.startswith("adi/")},
             "primary": {r: {k: v for k, v in rows.items() if k.startswith("adi/")} for r, rows in weak["primary"].items()}}
    block = WF.compute_primary_holm(quick)
    assert "p_holm" not in block and "declared" in block["incomplete"]
    with pytest.raises(GabaritoError, match="only part of the declared primary family"):
        WF.primary_p({**quick, WF.PRIMARY_HOLM: block})
    assert "p_holm" in WF.compute_primary_holm(weak)  # the whole family: Holm over the ten
