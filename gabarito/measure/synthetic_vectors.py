"""ArcadeDB's vector index under a synthetic load, and the settings the scaling benchmarks share.

``case-studies/standard_collections/bench_scaling.py`` and ``case-studies/peers/bench_vectors.py``
both start a fresh embedded server (:func:`start_server`), create a vector-only type with the same
LSM_VECTOR settings (:func:`synthetic_schema`), fill it with perturbed copies of real vectors
(:func:`ingest_synthetic`), query it with ``vector.neighbors`` (:func:`knn_sql`) and read the
server's memory (:func:`rss`), at the same depth :data:`K` and with the same model :data:`MODEL`
(a key of :data:`gabarito.retrieval.models.collection_vectors.MODELS`).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.errors import stderr_line as say
from gabarito.measure.scaling import perturbed_copies, process_memory
from gabarito.retrieval.arcadedb import ArcadeClient, ArcadeServer

MODEL = "minilm"
K = 10
VECTOR_DDL = "LSM_VECTOR METADATA {{dimensions: {dim}, similarity: 'COSINE', quantization: 'INT8'}}"
SYN_TYPE = "Syn"


def rss(server: ArcadeServer) -> dict | None:
    return process_memory(server.process.pid if server.process else None)


def start_server(root: Path, heap: str) -> ArcadeServer:
    server = ArcadeServer(root, heap=heap).start()
    return server


def knn_sql(index_name: str, ef: bool) -> str:
    arg = ", :ef" if ef else ""
    return f"SELECT doc_id, distance FROM (SELECT expand(vector.neighbors('{index_name}', :v, :k{arg})))"


def synthetic_schema(client: ArcadeClient, dim: int) -> str:
    """A vector-only type with the study's LSM_VECTOR settings; returns the vector index's name."""
    for sql in (f"CREATE DOCUMENT TYPE {SYN_TYPE}", f"CREATE PROPERTY {SYN_TYPE}.doc_id STRING",
                f"CREATE PROPERTY {SYN_TYPE}.embedding ARRAY_OF_FLOATS",
                f"CREATE INDEX ON {SYN_TYPE} (doc_id) UNIQUE"):
        client.command(sql)
    created = client.command(f"CREATE INDEX ON {SYN_TYPE} (embedding) " + VECTOR_DDL.format(dim=dim))
    return created[0]["name"]


def fresh_database(server: ArcadeServer, name: str, dim: int, timeout: float) -> tuple[ArcadeClient, str]:
    """A new, empty database ``name`` on ``server`` (an old one of that name is dropped) with the
    synthetic vector schema; returns its client and the vector index's name."""
    client = ArcadeClient(server.url, server.user, server.password, name, timeout=timeout)
    if client.database_exists():
        client.drop_database()
    client.create_database()
    return client, synthetic_schema(client, dim)


def ingest_synthetic(client: ArcadeClient, base: np.ndarray, matrix: np.ndarray, args, seed: int) -> float:
    """Insert ``len(matrix)`` perturbed copies of ``base`` (kept in ``matrix``); returns seconds."""
    n = len(matrix)
    insert = f"INSERT INTO {SYN_TYPE} CONTENT :rows RETURN @rid"
    t0 = time.perf_counter()
    next_report = 0.1
    for start, block in perturbed_copies(base, n, sigma=args.sigma, seed=seed, chunk=10_000):
        matrix[start:start + len(block)] = block
        for s in range(0, len(block), args.batch):
            rows = [{"doc_id": f"s{start + s + i}", "embedding": v.tolist()}
                    for i, v in enumerate(block[s:s + args.batch])]
            got = len(client.command(insert, {"rows": rows}))
            if got != len(rows):
                raise GabaritoError(f"synthetic ingest: {got} of {len(rows)} rows inserted")
        done = (start + len(block)) / n
        if done >= next_report:
            spent = time.perf_counter() - t0
            say(f"  ingested {start + len(block)}/{n} ({spent:.0f} s, ~{spent / done - spent:.0f} s left)")
            next_report = done + 0.1
    return time.perf_counter() - t0
