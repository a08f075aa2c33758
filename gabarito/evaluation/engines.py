"""The retrievers of an evaluation run: the chunks searched in memory or in ArcadeDB.

* ``memory``: exact cosine (:class:`~gabarito.retrieval.memory.ExactVectors`) and BM25 scored as
  ArcadeDB's FULL_TEXT index scores (:func:`~gabarito.retrieval.memory.arcadedb_bm25`: no stop words,
  no stemming, each distinct question word once).
* ``arcadedb``: one database per index content (``eval_<12 hex>`` of the fingerprint of the
  chunks, the model, its weights and settings, the vectors, the dimension and the analyzer),
  holding a type ``Chunk`` with the text field ``text``; reused when it holds exactly those
  chunks, verifiably whole (:func:`gabarito.retrieval.reuse.open_or_build`), else (re)built
  with one notice (when it cannot even be dropped: one line naming the folder to delete), under the database's
  build lock (:func:`gabarito.retrieval.arcadedb.locking.build_lock`), so that two runs on one
  server never build, drop or rebuild it at once; warmed up before searching.
  Its vector search is approximate (HNSW, INT8), unlike the memory engine's. Each search is
  bounded by ``$GABARITO_ARCADEDB_TIMEOUT`` seconds (default 120): a slower one stops the run
  with one line naming the question.

:func:`open_retrievers` is a context manager yielding ``(retrievers, info)``: ``retrievers`` maps
``"dense"`` and/or ``"bm25"`` to objects of the retriever protocol
(:mod:`gabarito.retrieval.protocol`), ``info`` describes the engine for the run record.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Callable, Iterator, Sequence

import numpy as np

from gabarito import __version__
from gabarito.evaluation.config import ANALYZERS, ARCADE_FIELD, ARCADE_TYPE, _NO_MODEL, EvalConfig
from gabarito.hashing import sha256_bytes, sha256_text
from gabarito.inputs.segment import Chunk
from gabarito.retrieval.protocol import TextRetriever, VectorRetriever

Echo = Callable[[str], None]


def chunks_sha256(chunks: Sequence[Chunk]) -> str:
    return sha256_text(json.dumps([[c.id, c.text] for c in chunks], ensure_ascii=False, separators=(",", ":")))


def _memory(chunks, vectors, encoder, cfg: EvalConfig):
    from gabarito.retrieval.memory import ExactVectors, arcadedb_bm25

    out = {}
    if vectors is not None:
        exact = ExactVectors([c.id for c in chunks], vectors, model_id=cfg.model or "")
        out["dense"] = VectorRetriever("dense", exact.knn, encoder)
    if cfg.uses_text:
        bm25 = arcadedb_bm25({c.id: c.text for c in chunks})  # scored as the reference, ArcadeDB, scores
        out["bm25"] = TextRetriever("bm25", bm25.search)
    return out, {"name": "memory", "version": f"gabarito {__version__}", "bm25_query_words": "once"}


def search_timeout() -> float:
    """Seconds one ArcadeDB search may take: ``$GABARITO_ARCADEDB_TIMEOUT``, 120 by default."""
    from gabarito.retrieval.arcadedb.client import check_timeout

    return check_timeout(os.environ.get("GABARITO_ARCADEDB_TIMEOUT") or "120", "GABARITO_ARCADEDB_TIMEOUT")


def index_parts(chunks, vectors, model: dict | None, analyzer_class: str | None, encoder=None) -> dict:
    """Everything that changes what an evaluation database holds (its fingerprint's parts): the
    chunks, the model, its weights *and settings* (:func:`~gabarito.retrieval.models.model_fingerprint`),
    the vectors themselves (sha256 of their bytes), the dimension and the analyzer."""
    from gabarito.retrieval.models.fingerprint import model_fingerprint

    return {"kind": "gabarito-evaluate", "chunks_sha256": chunks_sha256(chunks),
            "model": model["model_id"] if model else None,
            "weights": model.get("weights_sha256") if model else None,
            "model_fingerprint": model_fingerprint(encoder) if encoder is not None and vectors is not None else None,
            "vectors_sha256": sha256_bytes(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
            if vectors is not None else None,
            "dim": int(vectors.shape[1]) if vectors is not None else 1, "analyzer": analyzer_class}


@contextlib.contextmanager
def _arcadedb(chunks, vectors, encoder, model, cfg: EvalConfig, url, db_dir, echo: Echo):
    from gabarito.retrieval.arcadedb import ArcadeIndex, connect
    from gabarito.retrieval.arcadedb.locking import build_lock
    from gabarito.retrieval.models import cache_dir
    from gabarito.retrieval.reuse import fingerprint, open_or_build

    analyzer_class = ANALYZERS.get(cfg.analyzer) if cfg.analyzer else None
    parts = index_parts(chunks, vectors, model, analyzer_class, encoder)
    database = f"eval_{fingerprint(parts)[:12]}"
    root = db_dir if db_dir is not None else cache_dir() / "arcadedb-evaluate"
    timeout = search_timeout()
    with connect(url, root_dir=root, database=database, notice=echo, timeout=max(timeout, 120.0)) as conn:
        client = conn.client
        version = conn.server.version if conn.server is not None else client.server_version()
        index = ArcadeIndex(client, ARCADE_TYPE, notice=echo)  # build and warm-up: the client's timeout
        folder = conn.server.root_dir / "databases" / database if conn.server is not None else None
        if vectors is not None:
            stored, model_id = vectors, model["model_id"]
        else:  # BM25 only: the schema wants a vector per record; a constant one costs nothing
            stored, model_id = np.ones((len(chunks), 1), dtype=np.float32), _NO_MODEL
        with build_lock(client, ARCADE_TYPE, echo=echo):  # one builder at a time; others wait, then reuse
            state = open_or_build(index, parts, fields=[ARCADE_FIELD],
                                  rows=[{"doc_id": c.id, ARCADE_FIELD: c.text} for c in chunks],
                                  vectors=stored, model_id=model_id, analyzer=analyzer_class,
                                  progress=True, notice=echo, folder=folder)
        echo(f"ArcadeDB database {database}: index {state} ({len(chunks)} chunks)")
        index.warm_up(vectors[0] if vectors is not None else None, k=10)
        index.search_timeout = timeout  # each question's search
        out = {}
        if vectors is not None:
            out["dense"] = VectorRetriever("dense", lambda v, d: index.knn(v, d, model_id=model_id), encoder)
        if cfg.uses_text:
            out["bm25"] = TextRetriever("bm25", index.bm25)
        if cfg.method == "hybrid" and cfg.fusion_in == "arcadedb":
            out["native"] = native_fusion(index, encoder, cfg, model_id)
        yield out, {"name": "arcadedb", "version": version,
                    "server": "embedded" if conn.server is not None else client.url,
                    "database": database, "index": state, "analyzer_class": analyzer_class}


def native_fusion(index, encoder, cfg: EvalConfig, model_id: str):
    """ArcadeDB's ``vector.fuse`` for ``--fusion-in arcadedb``: ``rrf[:K]``, ``linear:W`` (W the
    weight of the dense list, as in Python) or ``dbsf``."""
    from gabarito.retrieval.arcadedb.native_fusion import NativeFusion

    name, _, arg = (cfg.fusion or "rrf").partition(":")
    if name == "rrf":
        return NativeFusion(index, encoder, fusion="rrf", rrf_k=int(arg) if arg else cfg.rrf_k, model_id=model_id)
    if name == "linear":
        w = float(arg) if arg else 0.5
        return NativeFusion(index, encoder, fusion="linear", weights=(1.0 - w, w), model_id=model_id)
    return NativeFusion(index, encoder, fusion="dbsf", model_id=model_id)


@contextlib.contextmanager
def open_retrievers(chunks: Sequence[Chunk], vectors: np.ndarray | None, encoder, model: dict | None,
                    cfg: EvalConfig, *, url: str | None = None, db_dir=None,
                    echo: Echo = lambda _t: None) -> Iterator[tuple[dict, dict]]:
    """The run's retrievers over ``chunks`` (see the module docstring)."""
    if cfg.engine == "memory":
        yield _memory(chunks, vectors, encoder, cfg)
        return
    with _arcadedb(chunks, vectors, encoder, model, cfg, url, db_dir, echo) as pair:
        yield pair
