"""ArcadeDB's FULL_TEXT BM25 (StandardAnalyzer) agrees with bm25s on a real collection.

The standard-collections study reports this agreement for all five collections; here it is
checked on ADI through the same retriever protocol the study uses, against a real server
(``pytest -m integration tests/parity/test_arcadedb_bm25s.py``).
"""

from pathlib import Path

import numpy as np
import pytest

from gabarito.measure import metrics
from gabarito.measure.parity import BM25Reference, parity
from gabarito.core.runs import Qrels
from gabarito.retrieval.arcadedb import ArcadeClient, ArcadeIndex
from gabarito.retrieval.protocol import Queries, TextRetriever
from gabarito.retrieval.reuse import open_or_build

pytestmark = pytest.mark.integration


def test_arcadedb_bm25_matches_bm25s_on_adi(arcade_server, mirror):
    pytest.importorskip("bm25s")
    from gabarito.inputs.collections import load_collection

    if not (Path(mirror) / "adi").exists():
        pytest.skip("no ADI in the mirror")
    c = load_collection("adi", mirror=mirror)
    client = ArcadeClient(arcade_server.url, arcade_server.user, arcade_server.password, "parity_adi")
    if not client.database_exists():
        client.create_database()
    index = ArcadeIndex(client, "ParityDoc")
    rng = np.random.default_rng(0)  # the vectors play no part here; the type needs some
    vectors = rng.normal(size=(len(c.documents), 4)).astype(np.float32)
    open_or_build(index, {"test": "parity", "n": len(c.documents)}, fields=["text"],
                  rows=[{"doc_id": d.id, "text": d.text} for d in c.documents], vectors=vectors,
                  model_id="none")
    try:
        queries = Queries.of([(q.id, q.query) for q in c.judged_queries()])
        db = TextRetriever("arcadedb", index.bm25).search(queries, 100)
        ref = BM25Reference({d.id: d.text for d in c.documents})
        ours = TextRetriever("bm25s", ref.search).search(queries, 100)
        qrels = Qrels(c.qrels)
        ndcg = {name: metrics.evaluate(run, qrels, ["nDCG@10"])["nDCG@10"] for name, run in
                (("arcadedb", db), ("bm25s", ours))}
        par = parity(db, ours, ndcg["arcadedb"], ndcg["bm25s"], k=10)
    finally:
        client.drop_database()
        client.close()
    assert par["n_queries"] == 35
    assert par["identical_topk"] == 35 and par["ndcg_diff"] == 0.0 and par["target_met"]
    assert par["max_rel_score_diff"] < 1e-5  # float32 scores on the server, float64 in bm25s
    # beyond the top 10 too: the same documents, in the same order, for every question
    assert all(db.ids(q) == ours.ids(q) for q in queries.ids)
