"""Document and query vectors of the classic test collections, cached on disk.

One cache for every study that encodes the classic collections (``standard_collections``' study and
scaling benchmark, the fusion study, the peers' vector benchmark), so all of them read the same
vectors. The cache is :class:`gabarito.retrieval.models.EmbeddingCache` under
``<cache dir>/embeddings-standard_collections`` (kept apart from the flagship's store so concurrent
runs never rewrite each other's files). Corpora are encoded in chunks, each saved before the next
starts, so an interrupted run loses at most one chunk; progress is printed with the rate and an
estimate of the time left. ``case-studies/standard_collections/embeddings.py`` prefills it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.errors import stderr_line as say
from gabarito.retrieval.models import EmbeddingCache, cache_dir, load_encoder

MODELS = {
    "minilm": "sentence-transformers/all-MiniLM-L6-v2",
    "mpnet": "sentence-transformers/all-mpnet-base-v2",
}
CHUNK = 256


def cache_root() -> Path:
    return cache_dir() / "embeddings-standard_collections"


class Vectors:
    """Encoders loaded once, with a document cache and a query cache."""

    def __init__(self, root: Path | None = None, *, device: str | None = None):
        """``device``: where the encoders run (:func:`gabarito.retrieval.device.choose_device`;
        ``None``, the default, is the CPU); each encoder's provenance records it."""
        root = Path(root) if root else cache_root()
        self.device = device
        self.docs = EmbeddingCache(root / "documents")
        self.queries = EmbeddingCache(root / "queries")
        self.encoders: dict = {}
        self.report: dict = {}

    def encoder(self, key: str):
        if key not in self.encoders:
            t0 = time.perf_counter()
            self.encoders[key] = load_encoder(MODELS[key], device=self.device)
            say(f"  model {MODELS[key]} loaded in {time.perf_counter() - t0:.1f} s")
        return self.encoders[key]

    def documents(self, key: str, texts: Sequence[str], label: str) -> np.ndarray:
        """Vectors of ``texts`` (cache first), encoded and saved chunk by chunk."""
        enc = self.encoder(key)
        out, hits, misses = [], 0, 0
        started, n = time.perf_counter(), len(texts)
        for start in range(0, n, CHUNK):
            part = list(texts[start:start + CHUNK])
            t0 = time.perf_counter()
            out.append(self.docs.encode(enc, part, batch_size=32))
            hits, misses = hits + self.docs.hits, misses + self.docs.misses
            if self.docs.misses:
                done = start + len(part)
                spent = time.perf_counter() - started
                rate = misses / spent if spent > 0 else float("nan")
                left = (n - done) / rate if rate > 0 else float("nan")
                say(f"  [{label} {key}] {done}/{n} documents ({self.docs.misses} encoded in "
                    f"{time.perf_counter() - t0:.1f} s; {rate:.1f} docs/s; ~{left / 60:.1f} min left)")
        vecs = np.vstack(out) if out else np.zeros((0, enc.dim), dtype=np.float32)
        self.report[f"{label}/{key}/documents"] = {"hits": hits, "misses": misses,
                                                   "seconds": round(time.perf_counter() - started, 2)}
        return vecs

    def query_vectors(self, key: str, texts: Sequence[str], label: str) -> np.ndarray:
        """Query vectors. Cached like documents, which is exact only when the model puts the same
        prefix before queries and documents (true for both models here: none)."""
        enc = self.encoder(key)
        if enc.query_prefix != enc.document_prefix:
            raise GabaritoError(f"{enc.model_id}: query and document prefixes differ; "
                                "queries cannot share the document cache")
        t0 = time.perf_counter()
        vecs = self.queries.encode(enc, list(texts), batch_size=32)
        self.report[f"{label}/{key}/queries"] = {"hits": self.queries.hits, "misses": self.queries.misses,
                                                 "seconds": round(time.perf_counter() - t0, 2)}
        return vecs
