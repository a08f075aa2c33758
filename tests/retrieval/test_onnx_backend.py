"""The ONNX Runtime backend: equivalence with torch on the fixed sample, the kept verdict, the
fallback when vectors differ, and the vector cache shared between backends.

The comparison itself is tested on arrays; the tests that export and run a real model
(all-MiniLM-L6-v2, small and packaged) are marked ``integration``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.models import CACHE_ENV, EmbeddingCache, Encoder, equivalence, model_fingerprint, onnx_backend

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
onnxruntime = pytest.importorskip("onnxruntime")


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_sample_is_fixed_and_spans_lengths():
    passages, queries = equivalence.sample()
    assert (passages, queries) == equivalence.sample()
    assert len(passages) == 120 and len(queries) == 24
    lengths = [len(p.split()) for p in passages]
    assert min(lengths) <= 5 and max(lengths) >= 300  # short texts and texts past any maximum length
    assert all(q and any(q in p.lower() for p in passages) for q in queries)


def test_compare_accepts_equal_vectors_and_refuses_a_component_or_a_ranking():
    rng = np.random.default_rng(0)
    passages, queries = _unit(rng.normal(size=(40, 8))), _unit(rng.normal(size=(5, 8)))
    same = equivalence.compare((passages, queries), (passages.copy(), queries + 1e-7))
    assert same["equivalent"] and same["top10_identical"] and same["max_abs_delta"] < 1e-6
    nudged = passages.copy()
    nudged[3, 2] += 2e-5
    far = equivalence.compare((passages, queries), (nudged, queries))
    assert not far["equivalent"] and abs(far["max_abs_delta"] - 2e-5) < 1e-6
    # a tiny change that swaps two passages in a query's top 10 fails too
    top = equivalence.top_k(queries, passages)[0]
    swapped = passages.copy()
    swapped[[top[0], top[1]]] = swapped[[top[1], top[0]]]
    moved = equivalence.compare((passages, queries), (swapped, queries), tolerance=10.0)
    assert not moved["top10_identical"] and moved["queries_differing"] >= 1 and not moved["equivalent"]


def test_top_k_breaks_ties_by_index():
    passages = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    assert equivalence.top_k(np.array([[1.0, 0.0]], dtype=np.float32), passages, 3) == [[0, 1, 2]]


def test_unknown_backend_is_one_line_error(monkeypatch):
    monkeypatch.setenv(onnx_backend.BACKEND_ENV, "tensorrt")
    with pytest.raises(GabaritoError, match="unknown encoder backend"):
        onnx_backend.chosen_backend(None)
    assert onnx_backend.chosen_backend("torch") == "torch"


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture()
def in_cache(cache_root, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(cache_root))
    monkeypatch.delenv(onnx_backend.BACKEND_ENV, raising=False)
    return cache_root


@pytest.mark.integration
def test_minilm_onnx_matches_torch_on_the_fixed_sample(in_cache):
    enc = Encoder(MINILM)
    assert enc.backend == "onnxruntime"
    verdict = json.loads((onnx_backend.export_folder(enc) / "verdict.json").read_text())
    assert verdict["equivalent"] and verdict["max_abs_delta"] < 1e-5 and verdict["top10_identical"]
    assert verdict["texts"] == {"passages": 120, "queries": 24}
    # other texts, another batch size: still torch's vectors and rankings
    texts = ["How do I return a defective product?", "Refunds are paid within 30 days.",
             "Carrot cake needs eggs, flour and sugar.", "search " * 400, ""]
    onnx_vecs, torch_vecs = enc.encode(texts, batch_size=2), enc.torch_encode(texts)
    assert onnx_vecs.shape == torch_vecs.shape == (5, 384) and onnx_vecs.dtype == np.float32
    assert float(np.abs(onnx_vecs - torch_vecs).max()) < 1e-5
    assert enc.provenance()["backend"] == "onnxruntime" and enc.encode([]).shape == (0, 384)


@pytest.mark.integration
def test_verdict_is_kept_and_the_cache_is_shared(in_cache, monkeypatch):
    onnx_enc = Encoder(MINILM)  # verdict from the previous test (or made now): not checked again
    monkeypatch.setattr(equivalence, "check", lambda *a: pytest.fail("verdict recomputed"))
    assert Encoder(MINILM).backend == "onnxruntime"
    torch_enc = Encoder(MINILM, backend="torch")
    assert torch_enc.backend == "torch" and model_fingerprint(torch_enc) == model_fingerprint(onnx_enc)
    cache = EmbeddingCache(in_cache / "vectors")
    first = cache.encode(torch_enc, ["one text", "another text"])
    again = cache.encode(onnx_enc, ["one text", "another text"])
    assert cache.misses == 0 and np.array_equal(first, again)  # vectors torch made, reused by ONNX


@pytest.mark.integration
def test_a_mismatch_falls_back_to_torch_with_one_notice(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    real = onnx_backend.OnnxTransformer._batch
    monkeypatch.setattr(onnx_backend.OnnxTransformer, "_batch", lambda self, texts: real(self, texts) + 1e-3)
    enc = Encoder(MINILM)
    assert enc.backend == "torch" and enc.onnx is None
    notices = [line for line in capsys.readouterr().err.splitlines() if "ONNX Runtime not used" in line]
    assert len(notices) == 1 and "differ from torch" in notices[0]
    assert enc.provenance()["backend"] == "torch"
    kept = json.loads((onnx_backend.export_folder(enc) / "verdict.json").read_text())
    assert not kept["equivalent"] and kept["max_abs_delta"] > 1e-4
    with pytest.raises(GabaritoError, match="ONNX Runtime backend .* unavailable"):
        Encoder(MINILM, backend="onnx")


@pytest.mark.integration
def test_batches_are_length_sorted_and_capped(in_cache, monkeypatch):
    enc = Encoder(MINILM)
    seen = []
    real = onnx_backend.OnnxTransformer._batch
    monkeypatch.setattr(onnx_backend.OnnxTransformer, "_batch", lambda self, texts: seen.append(texts) or real(self, texts))
    texts = [("word " * (i % 7)) + str(i) for i in range(40)]
    vecs = enc.encode(texts, batch_size=64)
    assert [len(b) for b in seen] == [onnx_backend.MAX_BATCH] * 2 + [40 - 2 * onnx_backend.MAX_BATCH]
    lengths = [len(t.split()) for b in seen for t in b]
    assert lengths == sorted(lengths, reverse=True)  # longest first: a batch pads to texts of its own length
    assert float(np.abs(vecs - enc.torch_encode(texts)).max()) < 1e-5  # rows back in the callers' order
