"""studies.helpcenter.findings: hand-made results (the chosen run, a cut that trades top-1 for
top-5 or not, ties between models, a type with no answerable question, the run log's splits,
the validated threshold) and the committed results (headline = tables)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gabarito.publish import formatting as fmt
from studies.helpcenter import findings

REPO = Path(__file__).resolve().parents[2]


def _q(qid, *, qtype="exact", severity="medium", answerable=True, hit1=True, hit5=True, score=0.9):
    return {"id": qid, "query": f"pergunta {qid}", "type": qtype, "severity": severity, "answerable": answerable,
            "expected": ["doc-a"] if answerable else [], "returned": [{"id": f"doc-{i}", "score": score - i / 10}
                                                                     for i in range(5)],
            "hit@1": hit1 if answerable else None, "hit@3": hit5 if answerable else None,
            "hit@5": hit5 if answerable else None, "rr": (1.0 if hit1 else 0.5) if answerable else None,
            "false_positive": "" if hit1 else "doc-0", "top_score": score}


def _summary(top1, top5, mrr, n=10):
    value = lambda v: {"value": v, "ci95": [v - 0.1, v + 0.1]}
    return {"n_queries": n + 2, "n_answerable": n, "top1": value(top1), "top3": value((top1 + top5) / 2),
            "top5": value(top5), "mrr": value(mrr)}


def _pair(variant, label, model=None, *, tuning=(0.5, 0.9, 0.6), heldout=(0.5, 0.9, 0.6), rows=()):
    side = lambda values, run: {"run_id": run, "config": {"label": label, "model": model}, "n_chunks": 7,
                                "model": {"origin": "pypi:x"} if model else None,
                                "summary": _summary(*values), "per_query": list(rows)}
    return {"variant": variant, "tuning": side(tuning, f"{label}-t"), "heldout": side(heldout, f"{label}-h")}


@pytest.fixture
def results():
    rows = [_q("q1", qtype="code"), _q("q2", qtype="code", hit1=False, severity="critical"),
            _q("q3", qtype="ambiguous", hit1=False, hit5=False, severity="high", score=0.4),
            _q("q4", answerable=False, score=0.3), _q("q5", answerable=False, score=0.95),
            _q("q6", qtype="code", answerable=False, score=0.2)]
    bm25_rows = [_q("q1", qtype="code"), _q("q2", qtype="code")]
    return {"provenance": {"corpus": {"n_docs": 12}},
            "chosen": {"label": "hybrid"},
            "groups": {
                "segmentation": [_pair("document", "seg=document", tuning=(0.50, 0.90, 0.60)),
                                 _pair("paragraph", "seg=paragraph", tuning=(0.60, 0.80, 0.62)),
                                 _pair("section", "seg=section", tuning=(0.55, 0.95, 0.61))],
                "model": [_pair("m1", "model=m1", "org/m1", tuning=(0.6, 0.9, 0.70), rows=rows),
                          _pair("m2", "model=m2", "org/m2", tuning=(0.6, 0.9, 0.70), rows=rows[:2])],
                "lexical": [_pair("standard", "bm25 standard", tuning=(0.5, 0.9, 0.65)),
                            _pair("portuguese", "bm25 portuguese", tuning=(0.5, 0.9, 0.66), rows=bm25_rows)],
                "hybrid": [_pair("rrf", "hybrid", tuning=(0.7, 0.9, 0.80), heldout=(0.6, 0.8, 0.7), rows=rows)]}}


def test_headline_is_the_chosen_run(results):
    h = findings.headline(results)
    assert h["label"] == "hybrid" and h["n_tuning"] == h["n_heldout"] == 10
    assert h["tuning"] == {"top1": 0.7, "top5": 0.9, "mrr": 0.8}
    assert h["heldout"] == {"top1": 0.6, "top5": 0.8, "mrr": 0.7}
    assert h["heldout_ci"]["top1"] == [0.5, 0.7]
    assert findings.chosen(results)["variant"] == "rrf"
    with pytest.raises(KeyError):
        findings.by_label(results, "nobody")


def test_segmentation_tradeoff_names_only_the_cut_that_trades(results):
    t = findings.segmentation_tradeoff(results)
    assert t["traded"] == ["seg=paragraph"]               # more top-1, less top-5; section gains both
    assert t["whole"]["top1"] == 0.50
    assert t["mrr_within_half_ci"]                       # 0.02 and 0.01 apart, half-widths 0.1
    results["groups"]["segmentation"][1]["tuning"]["summary"]["mrr"]["value"] = 0.9
    assert not findings.segmentation_tradeoff(results)["mrr_within_half_ci"]


def test_best_dense_tie_goes_to_the_first_model(results):
    assert findings.best_dense(results)["variant"] == "m1"
    ms = findings.model_summary(results)
    assert ms["best"] == "hybrid" and ms["lexical"] == {"standard": 0.65, "portuguese": 0.66}


def test_error_rows_leave_out_groups_without_answerable_questions(results):
    by_type = findings.error_rows(results, "type", ["exact", "code", "ambiguous", "unknown"])
    # both halves of the chosen pair: each row counted twice
    assert [r["type"] for r in by_type] == ["code", "ambiguous"]
    code = by_type[0]
    assert code["n"] == 4 and code["top1"] == 0.5 and code["top5"] == 1.0 and code["misses"] == 2
    assert by_type[1]["misses"] == 2 and by_type[1]["top1"] == 0.0


def test_advice_compares_codes_and_counts_serious_misses(results):
    a = findings.advice(results)
    assert a["code"] == 0.5 and a["code_bm25"] == 1.0 and a["words_first"]
    assert a["ambiguous"] == 0.0 and a["serious_misses"] == 4     # q2 (critical) and q3 (high), in both halves
    assert findings.hit_rate(findings.chosen(results), "nonexistent") is None


def test_validated_threshold_lets_through_at_most_the_stated_share(results):
    v = findings.validated_threshold(results)
    first = v["chosen_on_first_half"]
    assert v["max_through"] == findings.MAX_THROUGH and v["seed"] == findings.THRESHOLD_SEED
    assert first["unanswerable_through"] <= findings.MAX_THROUGH * first["unanswerable_total"]
    lim = findings.threshold_rows(results)
    assert lim["model"] == "org/m1" and len(lim["rows"]) == len(findings.QUANTILES)
    assert [r["threshold"] for r in lim["rows"]] == sorted(r["threshold"] for r in lim["rows"])


def test_spreadsheet_and_groups(results):
    rows = findings.spreadsheet(findings.chosen(results)["heldout"])
    assert len(rows) == 6 and len(rows[0]["returned"]) == findings.SHOWN
    assert rows[3]["hits"] == {1: None, 3: None, 5: None} and rows[3]["rr"] is None
    block = findings.group_block(results["groups"]["segmentation"])
    assert block.methods == ["seg=document", "seg=paragraph", "seg=section"]
    assert block.interval("seg=document", "top1") == (0.4, 0.6)
    assert findings.group_rows(results["groups"]["model"])[0]["origin"] == "pypi:x"


def test_composition_counts_one_or_several(results):
    evaluation = [{"type": "exact", "severity": "low"}, {"type": "code", "severity": "low"},
                  {"type": "code", "severity": "high"}]
    comp = findings.composition(evaluation, results)
    assert comp["n"] == 3 and comp["types"] == {"exact": 1, "code": 2} and comp["n_docs"] == 12
    assert fmt.plural(comp["types"]["exact"], "pergunta", "perguntas") == "1 pergunta"
    assert fmt.plural(comp["types"]["code"], "pergunta", "perguntas") == "2 perguntas"
    assert comp["frozen_at"] is None  # no lock given
    assert findings.composition(evaluation, results, {"frozen_at": "2026-12-01T10:00:00+00:00"})["frozen_at"] \
        == "2026-12-01T10:00:00+00:00"


def test_log_rows_read_the_split_from_the_evaluation_file(tmp_path):
    line = lambda path, label, cache: json.dumps({
        "run_id": path, "date": "2026-12-02T19:00:39+00:00", "config": {"label": label}, "evaluation_path": path,
        "summary": {"n_answerable": 3, "top1": {"value": 0.5}, "mrr": {"value": 0.6}}, "cache": cache})
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join([line("e.tuning.json", "a", {"hits": 1, "misses": 2}), "",
                              line("e.heldout.json", "", None), line("evaluation.json", "b", None)]) + "\n")
    from gabarito.study.integrity import record

    record(log, when="2026-12-02T19:00:40+00:00")  # as the study records the log it read
    rows = findings.log_rows(log)
    assert [r["split"] for r in rows] == ["tuning", "heldout", "all"]
    assert rows[1]["label"] is None and rows[0]["cache"] == {"hits": 1, "misses": 2}


def test_committed_headline_equals_the_tables():
    from gabarito.publish.provenance import load_results

    res = load_results(REPO / "case-studies" / "helpcenter")
    h = findings.headline(res)
    assert set(h) == {"label", "n_tuning", "n_heldout", "tuning", "heldout", "heldout_ci"}
    gap = {r["measure"]: r for r in findings.tuning_gap(res)}
    for m in findings.HEADLINE_MEASURES:
        assert h["tuning"][m] == gap[m]["tuning"][0] and h["heldout"][m] == gap[m]["heldout"][0]
    assert h["heldout_ci"]["top1"] == gap["top1"]["heldout"][1]
    log = findings.log_rows(REPO / "case-studies" / "helpcenter" / "runs" / "log.jsonl")
    held = next(r for r in log if r["run_id"] == res["chosen"]["heldout_run"])
    assert held["top1"] == h["heldout"]["top1"] and held["n_answerable"] == h["n_heldout"]


def test_essential_says_whether_the_heldout_means_fall_inside_the_tuning_intervals(results):
    held = results["groups"]["hybrid"][0]["heldout"]["summary"]
    held["top1"]["value"], held["top5"]["value"], held["mrr"]["value"] = 0.65, 0.85, 0.75
    e = findings.essential(results)
    assert e["label"] == "hybrid" and e["inside"]            # tuning 0.7, 0.9, 0.8, each +- 0.1
    assert e["ci_width"] == pytest.approx(0.2)
    assert e["threshold_model"] == "org/m1" and "unanswerable_through" in e["threshold"]
    held["top5"]["value"] = 0.75
    assert not findings.essential(results)["inside"]


def test_essential_block_adds_the_chosen_runs_heldout_questions(results):
    block = findings.essential_block(results)
    assert block.methods == ["model=m1", "model=m2", "bm25 standard", "bm25 portuguese", "hybrid",
                             findings.HELDOUT_KEY]
    assert block.mean(findings.HELDOUT_KEY, "top1") == 0.6 and block.mean("hybrid", "top1") == 0.7
    assert block.interval(findings.HELDOUT_KEY, "mrr") == (pytest.approx(0.6), pytest.approx(0.8))
    assert findings.best_lexical(results)["variant"] == "portuguese"


def test_committed_rivals_are_the_tables_runs_compared_with_the_chosen():
    from gabarito.measure.report import ALPHA
    from gabarito.publish.provenance import load_results

    base = REPO / "case-studies" / "helpcenter"
    res = load_results(base)
    rivals = findings.rivals(res)
    mrr = {r["label"]: r["measures"]["mrr"][0] for r in findings.group_rows(findings.runs(res))}
    assert [r["label"] for r in rivals] == [findings.best_dense(res)["tuning"]["config"]["label"],
                                            findings.best_lexical(res)["tuning"]["config"]["label"]]
    for r in rivals:
        assert r["chosen_mean"] == pytest.approx(findings.headline(res)["tuning"]["mrr"])
        assert r["mean"] == pytest.approx(mrr[r["label"]])
        assert r["diff"] == pytest.approx(r["chosen_mean"] - r["mean"])
        assert r["ci"][0] <= r["diff"] <= r["ci"][1]
        assert (r["verdict"] == "same") == (r["p_holm"] >= ALPHA or r["diff"] == 0)


def test_rivals_are_read_as_the_study_stored_them_and_equal_the_computation():
    """The chapter computes no statistic while the site builds: the rivals' tests and the dense
    model against the fusion are what run_evaluations.py stored (its ``statistics``), and the same
    functions on the runs give the same numbers; results without them are one line."""
    from gabarito.errors import GabaritoError
    from gabarito.publish.provenance import load_results

    base = REPO / "case-studies" / "helpcenter"
    res = load_results(base)
    log = base / "runs" / "log.jsonl"
    computed = json.loads(json.dumps(findings.compute_rivals(res, log)))
    assert res["rivals"] == computed  # the Report, its runs and its measure, as the study stored them
    assert findings.rivals(res) == findings.rivals({"rivals": computed})
    assert findings.dense_against_fusion(res) == json.loads(json.dumps(findings.compute_dense_against_fusion(res, log)))
    stored = json.loads(json.dumps(res))
    stored["rivals"]["report"]["tests"] = [{**r, "p_holm": 0.5} for r in stored["rivals"]["report"]["tests"]]
    # read, never recomputed
    assert findings.rivals(stored)[0]["p_holm"] == 0.5
    for key, read_it in (("rivals", findings.rivals), ("dense_against_fusion", findings.dense_against_fusion)):
        with pytest.raises(GabaritoError, match=f"no stored '{key}'.*--statistics-only"):
            read_it({k: v for k, v in res.items() if k != key})


def test_cache_rows_keep_the_file_order_and_say_where_the_cold_time_sits():
    perf = {"segmentation": "section",
            "rows": [{"model": "b", "origin": "pypi:b", "n_chunks": 7, "cold": {"wall_s": 4.0}, "warm": {"wall_s": 0.5},
                      "speedup_warm": 8.0, "qps_search_only": 900.0},
                     {"model": "a", "origin": "hf:a", "n_chunks": 9, "cold": {"wall_s": 6.0}, "warm": {"wall_s": 1.5},
                      "speedup_warm": 4.0, "qps_search_only": 100.0}]}
    out = findings.cache_rows(perf)
    assert out["segmentation"] == "section" and [r["model"] for r in out["rows"]] == ["b", "a"]
    a = out["rows"][1]
    assert (a["cold_s"], a["warm_s"], a["speedup"], a["qps"], a["n_chunks"]) == (6.0, 1.5, 4.0, 100.0, 9)
    assert a["cold_key"] == ["rows", 1, "cold", "wall_s"]
    committed = json.loads((Path(__file__).resolve().parents[2] / "case-studies" / "helpcenter" / "perf.json")
                           .read_text(encoding="utf-8"))
    for r in findings.cache_rows(committed)["rows"]:
        _, i, *_ = r["cold_key"]
        assert committed["rows"][i]["cold"]["wall_s"] == r["cold_s"] and committed["rows"][i]["model"] == r["model"]


def test_how_measured_is_the_list_depth_and_the_resamples_the_study_recorded():
    res = {"provenance": {"parameters": {"base": {"k": 7}, "bootstrap_resamples": 2000}}}
    assert findings.how_measured(res) == {"k": 7, "resamples": 2000}
