"""ScoreTable: a reader answering from precomputed scores orders candidates like the live one."""

import numpy as np
import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.pipeline import second_reading
from gabarito.retrieval.rerank import rerank
from gabarito.retrieval.score_table import ScoreTable


class LengthReader:
    """Scores a text by its length; counts calls."""

    name = "length"

    def __init__(self):
        self.calls = 0

    def score(self, query, texts):
        self.calls += 1
        return np.array([len(t) for t in texts], dtype=float)

    def provenance(self):
        return {"id": "length", "kind": "toy"}


def test_score_table_orders_like_the_live_reader():
    reader = LengthReader()
    texts = ["aa", "a", "aaaa", "aaa", "bb"]
    table = ScoreTable.compute(reader, ["q1", "q2", "q1"], texts)
    assert reader.calls == 2  # one call per distinct query
    cands = list(enumerate(texts))
    for n in (None, 0, 1, 3, 5):
        assert rerank("q1", cands, table, n=n) == rerank("q1", cands, reader, n=n)
    # equal scores keep the first-stage order ("aa" before "bb")
    assert [cid for cid, _ in rerank("q2", cands, table)] == [2, 3, 0, 4, 1]
    assert table.provenance() == {"id": "length", "kind": "toy", "scored_beforehand": True}


def test_second_reading_with_a_table_equals_the_live_reader():
    reader = LengthReader()
    texts = {"d1": "aa", "d2": "a", "d3": "aaaa", "d4": "bb", "d5": "aaa"}
    table = ScoreTable.compute(reader, ["q"], list(texts.values()))
    ranked = [(d, 1.0 - i / 10) for i, d in enumerate(texts)]
    for n in (1, 3, 5):
        assert second_reading("q", ranked, texts, table, n) == second_reading("q", ranked, texts, reader, n)
    # n = 3 reads d1..d3 again (d3 first), d4 and d5 follow in their order below every read score
    assert [d for d, _ in second_reading("q", ranked, texts, table, 3)] == ["d3", "d1", "d2", "d4", "d5"]


def test_score_table_refuses_unscored_pairs():
    table = ScoreTable("t", {"q": {"a": 1.0}})
    assert table.score("q", ["a"]).tolist() == [1.0]
    with pytest.raises(GabaritoError, match="not scored"):
        table.score("q", ["b"])
    with pytest.raises(GabaritoError, match="no scores"):
        table.score("other", ["a"])


def test_score_table_refuses_a_reader_returning_nan():
    class NaNReader(LengthReader):
        def score(self, query, texts):
            return np.array([np.nan] * len(texts))

    with pytest.raises(GabaritoError, match="NaN"):
        ScoreTable.compute(NaNReader(), ["q"], ["a"])


class ToyMaxSim:
    """MaxSim over one-hot "token vectors" of the characters (the library's arithmetic)."""

    kind = "maxsim"
    name = "toy-maxsim"
    query_prefix = "q:"
    document_prefix = "d:"

    def __init__(self):
        self.encoded = 0

    def token_vectors(self, texts):
        self.encoded += len(texts)
        out = []
        for t in texts:
            body = t.split(":", 1)[1]
            out.append(np.array([np.eye(26)[ord(c) - 97] for c in body if c.isalpha()]).reshape(-1, 26))
        return out

    def score(self, query, texts):
        q = self.token_vectors([self.query_prefix + query])[0]
        docs = self.token_vectors([self.document_prefix + t for t in texts])
        return np.array([float((q @ d.T).max(axis=1).sum()) if len(d) and len(q) else 0.0 for d in docs])


class ToySparse:
    kind = "sparse"
    name = "toy-sparse"

    def _vec(self, texts):
        from scipy import sparse

        return sparse.csr_matrix(np.array([[t.count(c) for c in "abc"] for t in texts], dtype=float))

    def encode_documents(self, texts):
        return self._vec(texts)

    def encode_query(self, query):
        return self._vec([query])

    def score(self, query, texts):
        return (self.encode_documents(texts) @ self.encode_query(query).T).toarray().reshape(-1)


@pytest.mark.parametrize("reader", [ToyMaxSim(), ToySparse()])
def test_score_table_fast_paths_equal_the_readers_own_scores(reader):
    texts = ["abc", "aab", "", "xyz", "cab"]
    table = ScoreTable.compute(reader, ["ab", "c", "zz"], texts)
    for q in ("ab", "c", "zz"):
        np.testing.assert_allclose(table.score(q, texts), reader.score(q, texts))


def test_maxsim_fast_path_encodes_each_text_once():
    reader = ToyMaxSim()
    ScoreTable.compute(reader, ["ab", "c", "zz"], ["abc", "aab", "abc"])
    assert reader.encoded == 2 + 3  # two distinct texts once, then one vector set per query
