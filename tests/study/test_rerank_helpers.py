"""Fast tests of gabarito.study.rerank_helpers (no model, no network)."""

import math
import os

import numpy as np
import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.rerank import rerank
from gabarito.study.rerank_helpers import (
    ScoreTable,
    describe_counts,
    finite_or_none,
    gold_rank,
    listwise_prompt,
    load_tiktoken,
    permutation_answer,
    rank_measures,
    separation_auc,
)


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


def test_score_table_refuses_unscored_pairs():
    table = ScoreTable("t", {"q": {"a": 1.0}})
    assert table.score("q", ["a"]).tolist() == [1.0]
    with pytest.raises(GabaritoError, match="not scored"):
        table.score("q", ["b"])
    with pytest.raises(GabaritoError, match="no scores"):
        table.score("other", ["a"])


def test_gold_rank_and_measures():
    assert gold_rank(["x", "g", "h"], {"g", "h"}) == 2
    assert gold_rank([("x", 0.9), ("y", 0.5), ("g", 0.1)], ["g"]) == 3
    assert gold_rank(["x"], []) is None
    m = rank_measures([1, 2, None, 4], hits=(1, 3))
    assert m == {"n": 4, "hit@1": 0.25, "hit@3": 0.5, "mrr": pytest.approx((1 + 0.5 + 0.25) / 4)}
    with pytest.raises(GabaritoError):
        rank_measures([])
    with pytest.raises(GabaritoError):
        rank_measures([0])


def test_separation_auc():
    assert separation_auc([3, 4], [1, 2]) == 1.0
    assert separation_auc([1, 2], [3, 4]) == 0.0
    assert separation_auc([1, 1], [1]) == 0.5
    assert separation_auc([2, 0], [1]) == 0.5
    with pytest.raises(GabaritoError):
        separation_auc([], [1])
    with pytest.raises(GabaritoError):
        separation_auc([math.nan], [1])


def test_describe_counts():
    d = describe_counts([1, 2, 3, 10])
    assert (d["n"], d["mean"], d["median"], d["min"], d["max"], d["sum"]) == (4, 4.0, 2.5, 1.0, 10.0, 16.0)
    with pytest.raises(GabaritoError):
        describe_counts([])


def test_listwise_prompt_and_answer():
    prompt = listwise_prompt("onde está meu pedido?", ["primeiro  texto\ncom quebra", "segundo"])
    assert "2 numbered passages" in prompt
    assert "[1] primeiro texto com quebra\n\n[2] segundo" in prompt
    assert prompt.count("Query: onde está meu pedido?") == 2 and prompt.endswith("Ranking:")
    assert permutation_answer(3) == "[1] > [2] > [3]"
    assert permutation_answer(0) == ""
    with pytest.raises(GabaritoError):
        permutation_answer(-1)


def test_finite_or_none():
    assert finite_or_none(None) is None and finite_or_none(-math.inf) is None and finite_or_none(2) == 2.0


def test_load_tiktoken_reports_every_failed_source(monkeypatch):
    pytest.importorskip("tiktoken")
    import tiktoken

    def offline(name):
        raise ConnectionError("no network here")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    enc, report = load_tiktoken("o200k_base", sources=[("no-such-distribution-xyz", "x/{name}", False)])
    assert enc is None
    assert report["attempts"][0]["error"] == "ConnectionError: no network here"
    assert report["attempts"][1]["source"] == "pypi:no-such-distribution-xyz"


def test_load_tiktoken_from_a_package_checks_the_pinned_hash(monkeypatch, tmp_path):
    pytest.importorskip("tiktoken")
    from importlib import metadata

    import tiktoken
    import tiktoken.load

    real = tiktoken.get_encoding
    calls = []

    def first_offline(name):
        calls.append(name)
        if len(calls) == 1:
            raise ConnectionError("no network here")
        return real(name)

    class FakeDist:
        version = "0"

        def locate_file(self, member):
            return tmp_path / member

    def no_download(blobpath):
        raise ConnectionError(f"no network for {blobpath}")

    (tmp_path / "o200k_base.tiktoken").write_bytes(b"not a real BPE file\n")
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setattr(tiktoken.load, "read_file", no_download)
    monkeypatch.setattr(tiktoken, "get_encoding", first_offline)
    monkeypatch.setattr(metadata, "distribution", lambda name: FakeDist())
    enc, report = load_tiktoken("o200k_base", sources=[("fake", "{name}.tiktoken", False)])
    assert enc is None  # tiktoken refused the file: its sha256 is not the pinned one
    assert report["attempts"][-1]["source"] == "pypi:fake"
    assert len(calls) == 2 and "TIKTOKEN_CACHE_DIR" not in os.environ


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
