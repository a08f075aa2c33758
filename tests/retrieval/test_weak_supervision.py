"""Weak supervision (pseudo-queries, false-negative filtering) and the fused second reading."""

import numpy as np
import pytest

from gabarito.core.runs import Run
from gabarito.errors import GabaritoError
from gabarito.inputs.items import Document
from gabarito.retrieval.pipeline import fuse_reading
from gabarito.retrieval.rerank.training import ASSUMED_NEGATIVE, POSITIVE, RANDOM_NEGATIVE, PairPlan
from gabarito.retrieval.rerank.weak import (PseudoQuery, false_negatives, pseudo_queries, split_pseudo_query,
                                            weak_pairs)

BODY = "the rest of this document explains the method in enough words to be a positive text for training"


def test_a_title_the_text_starts_with_becomes_the_pseudo_query_and_its_repetition_is_dropped():
    text = f"shear flow past a plate .\n\nshear flow past a plate .\n{BODY}"
    query, rest, source = split_pseudo_query(text, "shear flow past a plate .")
    assert (query, source) == ("shear flow past a plate", "title")
    assert rest == BODY  # Cranfield repeats the title at the head of the abstract: not kept


def test_without_a_title_the_first_sentence_asks_and_a_line_break_inside_it_is_a_space():
    query, rest, source = split_pseudo_query(f"changes of the nucleic acid levels\nof the livers .  {BODY}")
    assert (query, source) == ("changes of the nucleic acid levels of the livers", "first sentence")
    assert rest == BODY


def test_a_title_with_inner_punctuation_is_not_cut_before_its_last_word():
    title = "Dr. Smith on the U.S. libraries"
    query, _, source = split_pseudo_query(f"{title}  {BODY}", title)
    assert (query, source) == (title, "title")


@pytest.mark.parametrize("text", ["", "   ", "one two", f"tiny title . too short rest",
                                  " ".join(["word"] * 60) + " . " + BODY])
def test_documents_without_a_usable_split_are_skipped(text):
    assert split_pseudo_query(text) is None


def test_pseudo_queries_count_what_was_skipped_and_sample_with_a_seed():
    docs = [Document(str(i), f"topic number {i} here . {BODY}") for i in range(10)] + [Document("x", "short")]
    everything = pseudo_queries(docs)
    assert everything["counts"] == {"documents": 11, "usable": 10, "skipped": 1, "kept": 10, "title": 0,
                                    "first sentence": 10}
    a, b = pseudo_queries(docs, limit=4, seed=3), pseudo_queries(docs, limit=4, seed=3)
    assert [p.doc_id for p in a["pseudo"]] == [p.doc_id for p in b["pseudo"]]
    assert len(a["pseudo"]) == 4 and a["counts"]["usable"] == 10
    assert [p.doc_id for p in a["pseudo"]] == sorted((p.doc_id for p in a["pseudo"]), key=int)  # document order
    assert [p.doc_id for p in pseudo_queries(docs, limit=4, seed=4)["pseudo"]] != [p.doc_id for p in a["pseudo"]]


def test_a_negative_as_close_to_the_positive_as_the_query_is_a_false_negative():
    query, positive = np.array([1.0, 0.0]), np.array([0.8, 0.6])  # cosine(query, positive) = 0.8
    negatives = np.array([[0.8, 0.6], [1.0, 0.0], [0.0, 1.0], [2.0, 1.5]])  # cosines 1, .8, .6, 1
    assert false_negatives(query, positive, negatives).tolist() == [True, True, False, True]
    assert false_negatives(query, positive, np.zeros((0, 2))).tolist() == []


def _weak_fixture():
    docs = {f"d{i}": f"text of document {i}" for i in range(8)}
    pseudo = [PseudoQuery("d0", "query zero", "positive zero", "title"),
              PseudoQuery("d1", "query one", "positive one", "title")]
    cands = {"d0": ["d0", "d2", "d3", "d4"], "d1": ["d5", "d1", "d6"]}
    return docs, pseudo, cands


def test_weak_pairs_never_take_the_source_document_as_a_negative_and_are_seeded():
    docs, pseudo, cands = _weak_fixture()
    plan = PairPlan(negatives_per_positive=2, negative_depth=30, random_negatives_per_positive=1, seed=9)
    pairs, counts = weak_pairs(pseudo, docs, cands, plan, prefix="c:")
    again, _ = weak_pairs(pseudo, docs, cands, plan, prefix="c:")
    assert pairs == again
    assert counts == {"pseudo_queries": 2, "positives": 2, "hard_negatives": 4, "random_negatives": 2,
                      "dropped_as_false_negatives": 0, "filtered": False}
    for p in pairs:
        source = p.query_id.split("pq:")[1]
        if p.kind == POSITIVE:
            assert p.doc_id == f"c:{source}" and p.label == 1.0 and p.text.startswith("positive")
        else:
            assert p.doc_id != f"c:{source}" and p.label == 0.0
        if p.kind == RANDOM_NEGATIVE:
            assert p.doc_id[2:] not in cands[source]
        if p.kind == ASSUMED_NEGATIVE:
            assert p.doc_id[2:] in cands[source]


def test_the_filter_drops_what_the_bi_encoder_places_beside_the_positive():
    docs, pseudo, cands = _weak_fixture()
    close = {"positive zero", "text of document 2", "text of document 3"}  # d2, d3 sit on the positive

    def encode(texts):
        return np.array([[1.0, 0.0] if t in close else [0.0, 1.0] if t.startswith("text") else [0.7, 0.7]
                         for t in texts])

    plan = PairPlan(negatives_per_positive=2, negative_depth=30, random_negatives_per_positive=0, seed=1)
    pairs, counts = weak_pairs(pseudo[:1], docs, cands, plan, encode=encode)  # draws all of d2, d3, d4
    assert [p.doc_id for p in pairs if p.kind == ASSUMED_NEGATIVE] == ["d4"]
    assert counts["dropped_as_false_negatives"] == 2 and counts["filtered"] is True
    unfiltered, _ = weak_pairs(pseudo[:1], docs, cands, plan)
    assert {p.doc_id for p in unfiltered if p.kind == ASSUMED_NEGATIVE} < {"d2", "d3", "d4"}


def test_weak_pairs_need_a_pseudo_query():
    with pytest.raises(GabaritoError, match="no pseudo-query"):
        weak_pairs([], {"a": "x"}, {}, PairPlan())


# -- the second reading fused with the first stage ------------------------------------------------

FIRST = Run({"q": [("a", 9.0), ("b", 8.0), ("c", 7.0), ("d", 6.0)]})
READ = Run({"q": [("c", 0.9), ("b", 0.5), ("a", 0.1), ("d", -1.0)]})  # a reading of the top 3


def test_replace_keeps_the_readers_order_and_the_rest_follows_in_the_first_stages_order():
    assert FIRST.__class__(fuse_reading(FIRST, READ, 3, how="replace")).ids("q") == ["c", "b", "a", "d"]


def test_rrf_of_the_two_orders_sums_reciprocal_ranks_ties_by_doc_id():
    # a: 1/61 + 1/63, b: 2/62, c: 1/63 + 1/61 -> a and c tie above b; ties go by doc id
    fused = fuse_reading(FIRST, READ, 3, how="rrf")
    assert fused.ids("q") == ["a", "c", "b", "d"]
    assert dict(fused["q"])["a"] == pytest.approx(1 / 61 + 1 / 63)


def test_a_convex_weight_of_one_is_the_reader_and_zero_the_first_stage():
    assert fuse_reading(FIRST, READ, 3, how="convex", weight=1.0).ids("q") == ["c", "b", "a", "d"]
    assert fuse_reading(FIRST, READ, 3, how="convex", weight=0.0).ids("q") == ["a", "b", "c", "d"]
    # min-max within the top 3: first a=1, b=.5, c=0; reader c=1, b=.5, a=0 -> .75 weight on the reader
    assert fuse_reading(FIRST, READ, 3, how="convex", weight=0.75).ids("q")[:3] == ["c", "b", "a"]


def test_a_bad_fusion_or_weight_is_one_clear_error():
    with pytest.raises(GabaritoError, match="unknown fusion"):
        fuse_reading(FIRST, READ, 3, how="mean")
    with pytest.raises(GabaritoError, match="within"):
        fuse_reading(FIRST, READ, 3, how="convex", weight=1.5)


def test_the_lift_difference_is_the_paired_difference_of_two_lifts():
    from gabarito.measure.readings import lift_difference

    before_a, after_a = {"1": 0.2, "2": 0.4, "3": 0.1}, {"1": 0.5, "2": 0.4, "3": 0.3}
    before_b, after_b = {"1": 0.6, "2": 0.5, "3": 0.7, "4": 0.0}, {"1": 0.6, "2": 0.6, "3": 0.7, "4": 1.0}
    row = lift_difference(before_a, after_a, before_b, after_b, names=("bm25", "dense"), resamples=200, seed=1)
    # lifts a: .3, 0, .2; b: 0, .1, 0 (question 4 is not in a) -> mean difference (.3 - .1 + .2) / 3
    assert row["mean_diff"] == pytest.approx(0.4 / 3)
    assert (row["a"], row["b"], row["wins"], row["losses"]) == ("bm25", "dense", 2, 1)


def test_bm25_scores_pairs_as_its_own_ranking_does():
    from gabarito.retrieval.memory import BM25

    bm25 = BM25({"a": "shear flow over a plate", "b": "heat transfer in a plate", "c": "library use"})
    got = bm25.score_pairs([("plate flow", "a"), ("plate flow", "c"), ("heat", "b")])
    assert got == [bm25.scores("plate flow")[0], 0.0, bm25.scores("heat")[1]] and got[0] > 0
