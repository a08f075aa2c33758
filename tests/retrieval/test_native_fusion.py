"""ArcadeDB's own fusion (vector.fuse) against the pipeline's Python RRF, on a small corpus."""

import numpy as np
import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.arcadedb import ArcadeClient, ArcadeIndex
from gabarito.retrieval.arcadedb.native_fusion import NativeFusion, fuse_sql
from gabarito.retrieval.fusion import rrf_runs
from gabarito.retrieval.protocol import Queries, TextRetriever, VectorRetriever

TEXTS = ["cats sleep on warm mats", "dogs bark at the mail carrier", "fish swim in cold rivers",
         "birds sing at dawn", "cats and dogs can share a home", "how to clean a dusty mat",
         "rivers flood in spring", "a carrier pigeon finds home"]


class Enc:
    model_id = "test/rand-16"
    query_prefix = ""

    def __init__(self, vectors):
        self.vectors = vectors

    def encode_query(self, text):
        rng = np.random.default_rng(abs(hash(text)) % 2**32)
        return (self.vectors[len(text) % len(self.vectors)] + 0.1 * rng.normal(size=16)).astype(np.float32)


def test_sql_binds_everything_a_user_supplies():
    sql = fuse_sql("Chunk", "Chunk[text]", "Chunk[embedding]")
    assert ":q" in sql and ":v" in sql and ":depth" in sql and "{fusion: :opt_fusion, limit: :opt_limit}" in sql
    with pytest.raises(GabaritoError):
        fuse_sql("Chunk", "t", "v", ["fusion", "evil'); DROP"])
    with pytest.raises(GabaritoError):
        NativeFusion(index=None, encoder=None, fusion="borda")


@pytest.mark.integration
def test_native_rrf_equals_python_rrf_and_survives_hostile_text(arcade_server):
    client = ArcadeClient(arcade_server.url, "root", arcade_server.password, "native_fusion_test")
    if client.database_exists():
        client.drop_database()
    client.create_database()
    index = ArcadeIndex(client, "Chunk")
    vectors = np.random.default_rng(7).normal(size=(len(TEXTS), 16)).astype(np.float32)
    index.create(["text"], 16, Enc.model_id)
    index.ingest([{"doc_id": f"d{i}", "text": t} for i, t in enumerate(TEXTS)], vectors)
    index.warm_up(vectors[0])
    enc = Enc(vectors)
    questions = ["cat on a mat", "home for a carrier", "cold river fish", 'title:"x" OR 1=1; DROP TYPE Chunk --',
                 "(unbalanced [ { ~ * ? \\", "   ", "ç ã é — non-ASCII"]
    queries = Queries([f"q{i}" for i in range(len(questions))], questions)
    depth = 4
    words = TextRetriever("bm25", index.bm25).search(queries, depth)
    dense = VectorRetriever("dense", lambda v, d: index.knn(v, d, model_id=Enc.model_id), enc).search(queries, depth)
    python = rrf_runs([words, dense], rrf_k=60, depth=depth)
    native = NativeFusion(index, enc, fusion="rrf", rrf_k=60).search(queries, depth)
    for q in queries.ids:
        assert [d for d, _ in native[q]] == [d for d, _ in python[q]], q
        assert np.allclose([s for _, s in native[q]], [s for _, s in python[q]], rtol=1e-6)
    assert index.count() == len(TEXTS)  # the hostile text was searched as text, nothing was dropped
    for fusion, weights in (("dbsf", None), ("linear", (0.3, 0.7))):
        run = NativeFusion(index, enc, fusion=fusion, weights=weights).search(queries, depth)
        assert all(len(run[q]) >= 1 for q in queries.ids)
    # a question over Lucene's clause limit is cut, with one notice naming it, not a failed run
    notices = []
    index.notice = notices.append
    long = Queries(["longa"], ["cats mats " + " ".join(f"word{i}" for i in range(1100))])
    run = NativeFusion(index, enc, fusion="rrf", rrf_k=60).search(long, depth)
    assert run["longa"] and len(notices) == 1 and "'longa'" in notices[0]
    client.drop_database()
