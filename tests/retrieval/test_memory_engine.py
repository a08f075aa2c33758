import numpy as np
import pytest

from gabarito.retrieval.memory import BM25, ExactVectors
from gabarito.errors import GabaritoError

DOCS = {"d1": "wind turbines near the village", "d2": "solar panels on roofs",
        "d3": "wind and solar together", "d4": "heat pumps"}


def test_exact_cosine_and_ties_by_id():
    ex = ExactVectors(["b", "a", "c"], np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32), model_id="m")
    assert [d for d, _ in ex.knn(np.array([1, 0], dtype=np.float32), 2)] == ["a", "b"]
    with pytest.raises(GabaritoError, match="3 dims"):
        ex.knn(np.ones(3, dtype=np.float32), 1)
    with pytest.raises(GabaritoError, match="differs"):
        ex.check_model("other", 2)


def test_bm25_matches_bm25s_scores():
    bm25s = pytest.importorskip("bm25s")
    ours = BM25(DOCS, k1=1.2, b=0.75, stop=frozenset())
    tokens = bm25s.tokenize([DOCS[i] for i in DOCS], stopwords=None, show_progress=False, return_ids=False)
    ref = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    ref.index(tokens, show_progress=False)
    for query in ["wind", "solar roofs", "wind solar village"]:
        np.testing.assert_allclose(ours.scores(query), ref.get_scores(query.split()), rtol=1e-5)


def test_bm25_search_order():
    hits = BM25(DOCS).search("wind", 5)
    assert [d for d, _ in hits] == ["d3", "d1"] or [d for d, _ in hits] == ["d1", "d3"]
    assert all(s > 0 for _, s in hits)


def test_memory_bm25_splits_words_as_the_database_does():
    """ArcadeDB's standard analyzer keeps ``foo:bar`` (and ``U.S.A``) as one token; so does the memory engine."""
    from gabarito.retrieval.memory import tokenize

    assert tokenize("Codigo foo:bar no U.S.A.") == ["codigo", "foo:bar", "no", "u.s.a"]
    assert tokenize("the end: final", stop=frozenset({"the"})) == ["end", "final"]
