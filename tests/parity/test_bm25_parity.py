"""BM25 parity helpers: Lucene-like tokens, the bm25s reference with ArcadeDB's formula, agreement."""

import math

import pytest

from gabarito.errors import GabaritoError
from gabarito.measure.parity import (
    ARCADEDB_BM25_B,
    ARCADEDB_BM25_K1,
    BM25Reference,
    parity,
    score_agreement,
    topk_agreement,
)
from gabarito.retrieval.analyzer import lucene_standard_tokens


def test_tokens_follow_uax29_like_lucene_standard_tokenizer():
    assert lucene_standard_tokens("Don't e-mail the U.S.A. 3.5 1,000 foo_bar (x)?") == [
        "don't", "e", "mail", "the", "u.s.a", "3.5", "1,000", "foo_bar", "x"]
    assert lucene_standard_tokens("A/B  12th-century") == ["a", "b", "12th", "century"]
    assert lucene_standard_tokens("... -- !!") == []
    assert lucene_standard_tokens("Über Straße") == ["über", "straße"]
    with pytest.raises(GabaritoError):
        lucene_standard_tokens(None)


DOCS = {"d1": "the cat sat on the mat", "d2": "the dog sat", "d3": "cats and dogs",
        "d4": "a cat a cat a cat", "d5": ""}


def arcadedb_score(question, doc_id, k1=ARCADEDB_BM25_K1, b=ARCADEDB_BM25_B):
    """ArcadeDB's BM25Scorer, written out: idf = ln(1 + (N-df+.5)/(df+.5)), tf*(k1+1)/(tf+k1*norm)."""
    toks = {d: lucene_standard_tokens(t) for d, t in DOCS.items()}
    n = len(DOCS)
    avgdl = sum(len(t) for t in toks.values()) / n
    total = 0.0
    for term in dict.fromkeys(lucene_standard_tokens(question)):
        df = sum(term in t for t in toks.values())
        tf = toks[doc_id].count(term)
        if df == 0 or tf == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(toks[doc_id]) / avgdl))
    return total


def test_reference_scores_equal_arcadedb_formula_and_repeated_terms_count_once():
    pytest.importorskip("bm25s")
    ref = BM25Reference(DOCS)
    hits = ref.search("cat cat sat unknownword", 10)
    assert [d for d, _ in hits] == sorted((d for d in DOCS if arcadedb_score("cat sat", d) > 0),
                                          key=lambda d: -arcadedb_score("cat sat", d))
    for doc, score in hits:
        assert score == pytest.approx(arcadedb_score("cat sat", doc), rel=1e-5)
    assert ref.query_terms("Cat CAT sat zzz") == ["cat", "sat"]


def test_reference_ties_by_id_no_zero_scores_and_empty_question():
    pytest.importorskip("bm25s")
    ref = BM25Reference({"b": "x y", "a": "x y", "c": "z"})
    assert [d for d, _ in ref.search("x", 5)] == ["a", "b"]
    assert ref.search("nothing here", 5) == [] and ref.search("", 5) == [] and ref.search("x", 0) == []
    with pytest.raises(GabaritoError):
        BM25Reference({})


def test_topk_agreement():
    a = [("d1", 3.0), ("d2", 2.0), ("d3", 1.0)]
    assert topk_agreement(a, ["d1", "d2", "d3"], 3) == {"jaccard": 1.0, "overlap": 1.0, "identical": True,
                                                       "same_set": True}
    r = topk_agreement(["d1", "d2", "d3"], ["d2", "d1", "d4"], 3)
    assert r["jaccard"] == pytest.approx(2 / 4) and r["overlap"] == pytest.approx(2 / 3)
    assert not r["identical"] and not r["same_set"]
    assert topk_agreement([], [], 10)["identical"] and topk_agreement([], [], 10)["jaccard"] == 1.0
    with pytest.raises(GabaritoError):
        topk_agreement([], [], 0)


def test_score_agreement():
    assert score_agreement([("a", 2.0), ("b", 1.0)], [("a", 2.0), ("c", 5.0)]) == 0.0
    assert score_agreement([("a", 2.2)], [("a", 2.0)]) == pytest.approx(0.1)
    assert score_agreement([("a", 1.0)], [("b", 1.0)]) is None


def test_parity_summary_and_tolerance():
    run_a = {"q1": ["d1", "d2"], "q2": ["d3", "d4"]}
    run_b = {"q1": ["d1", "d2"], "q2": ["d4", "d3"]}
    out = parity(run_a, run_b, {"q1": 0.5, "q2": 0.8}, {"q1": 0.5, "q2": 0.7}, k=2, tolerance=0.051)
    assert out["n_queries"] == 2 and out["identical_topk"] == 1 and out["identical_topk_share"] == 0.5
    assert out["same_set_topk"] == 2 and out["mean_jaccard"] == 1.0
    assert out["ndcg_diff"] == pytest.approx(0.05) and out["max_abs_query_ndcg_diff"] == pytest.approx(0.1)
    assert out["target_met"] is True and out["differing_queries"] == ["q2"]
    assert parity(run_a, run_b, {"q1": 0.5, "q2": 0.8}, {"q1": 0.5, "q2": 0.7}, k=2,
                  tolerance=0.01)["target_met"] is False
    with pytest.raises(GabaritoError):
        parity(run_a, run_b, {"q1": 0.5}, {"q2": 0.5})
