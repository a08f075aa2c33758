"""What a results file records of the index it searched (``reuse.index_record``): the key it is
stored and reused under (``reuse.index_key``: its parts and its vectors) and the sha256 of its
vectors, each changing with what it names."""

from __future__ import annotations

import hashlib

import numpy as np

from gabarito.retrieval.reuse import index_key, index_record


def test_the_record_names_the_fingerprint_and_the_float32_bytes_of_the_vectors():
    parts = {"corpus_sha256": "c", "model_id": "m", "dim": 2}
    vectors = np.array([[1.0, 0.5], [0.25, -1.0]], dtype=np.float64)  # stored as float32
    got = index_record(parts, vectors)
    assert got["index_fingerprint"] == index_key(parts, vectors)
    assert got["vectors_sha256"] == hashlib.sha256(vectors.astype(np.float32).tobytes()).hexdigest()
    assert index_record(parts, vectors.astype(np.float32)) == got  # the dtype given does not matter
    nudged = vectors.copy()
    nudged[1, 1] = np.nextafter(np.float32(-1.0), np.float32(0.0))  # one float32 step
    assert index_record(parts, nudged)["vectors_sha256"] != got["vectors_sha256"]
    # the key an index is reused under changes with its vectors: another backend's never reuses it
    assert index_record(parts, nudged)["index_fingerprint"] != got["index_fingerprint"]
    assert index_record({**parts, "dim": 3}, vectors)["index_fingerprint"] != got["index_fingerprint"]
    assert index_record(parts, vectors[::-1])["vectors_sha256"] != got["vectors_sha256"]  # order counts
