"""The ArcadeDB engine against a real server started from the arcadedb-embedded wheel.

Run with ``pytest -m integration tests/test_arcadedb_server.py``.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import threading

import numpy as np
import pytest

from gabarito.retrieval.arcadedb import ArcadeClient, ArcadeIndex, ArcadeServer, connect
from gabarito.errors import GabaritoError

pytestmark = pytest.mark.integration

DOCS = [
    {"doc_id": "d1", "title": "Solar panels", "body": "Community acceptance of solar farms near villages"},
    {"doc_id": "d2", "title": "Wind turbines", "body": "Noise and landscape objections to onshore wind"},
    {"doc_id": "d3", "title": "What's this test", "body": "A placeholder record about (this) test: brackets"},
    {"doc_id": "d4", "title": "Hydrogen storage", "body": None},
    {"doc_id": "d6", "title": "Twin record", "body": "identical twin words"},
    {"doc_id": "d5", "title": "Twin record", "body": "identical twin words"},
]
VECTORS = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 1, 0, 0], [1, 1, 0, 0]],
                   dtype=np.float32)


def one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text
    return text


@pytest.fixture(scope="module")
def server(arcade_server):
    return arcade_server


@pytest.fixture(scope="module")
def index(server):
    client = ArcadeClient(server.url, server.user, server.password, "gabtest")
    client.create_database()
    idx = ArcadeIndex(client, "Concept")
    idx.create(["title", "body"], 4, "toy/model-4d")
    assert idx.ingest(DOCS, VECTORS, batch_size=4, progress=False) == len(DOCS)
    idx.warm_up()
    yield idx
    client.close()


def test_server_identity(server):
    assert server.version.startswith("26.10")
    assert server.url.startswith("http://127.0.0.1:")
    assert stat.S_IMODE(os.stat(server.root_dir / "root-password").st_mode) == 0o600
    cmdline = open(f"/proc/{server.process.pid}/cmdline", "rb").read().decode()
    assert server.password not in cmdline  # passed through the 0600 @argfile
    assert not (server.root_dir / "jvm-secret.args").exists()


def test_count_and_metadata(index):
    assert index.count() == len(DOCS)
    fresh = ArcadeIndex(index.client, "Concept")
    info = fresh.info()
    assert info["model_id"] == "toy/model-4d" and info["dim"] == 4 and info["fields"] == ["title", "body"]
    assert info["text_index"] == "Concept[title,body]" and info["vector_index"] == "Concept[embedding]"
    assert "vector.neighbors('Concept[embedding]', :v, :k)" in fresh.sql_knn
    assert "SEARCH_INDEX('Concept[title,body]', :q)" in fresh.sql_bm25


def test_bm25_with_lucene_syntax_in_question(index):
    hits = index.bm25('"what\'s (this)? a: [test]" AND -x', 3)
    assert hits[0][0] == "d3"
    assert all(isinstance(score, float) for _, score in hits)
    assert index.bm25("solar farms", 5)[0][0] == "d1"
    assert index.bm25("zzzunknownword", 5) == []


def test_bm25_ties_ordered_by_doc_id(index):
    hits = index.bm25("identical twin", 2)
    assert [doc for doc, _ in hits] == ["d5", "d6"] and hits[0][1] == hits[1][1]


def test_knn_returns_cosine_neighbours(index):
    query = np.array([0.9, 0.1, 0.05, 0.0], dtype=np.float32)
    hits = index.knn(query, 3)
    unit = VECTORS / np.linalg.norm(VECTORS, axis=1, keepdims=True)
    expected = unit @ (query / np.linalg.norm(query))
    assert hits[0][0] == "d1"
    assert [d for d, _ in hits[1:]] == ["d5", "d6"]  # tie on identical vectors, broken by id
    for doc, score in hits:
        assert score == pytest.approx(expected[[d["doc_id"] for d in DOCS].index(doc)], abs=0.02)


def test_model_and_dimension_mismatch(index):
    with pytest.raises(GabaritoError) as err:
        index.check_model("other/model", 4)
    assert "toy/model-4d" in one_line(err) and "other/model" in str(err.value)
    with pytest.raises(GabaritoError) as err:
        index.knn([1.0, 0.0, 0.0], 3)
    assert "(3 dims)" in one_line(err)
    with pytest.raises(GabaritoError):
        index.knn([1.0, 0.0, 0.0, 0.0], 3, model_id="other/model")


def test_duplicate_doc_id_rejects_whole_batch(index):
    with pytest.raises(GabaritoError) as err:
        index.ingest([{"doc_id": "new1", "title": "x"}, {"doc_id": "d1", "title": "dup"}],
                     [[1, 0, 0, 0], [0, 1, 0, 0]], progress=False)
    assert "uplicate" in one_line(err) and index.client.url in str(err.value)
    assert index.count() == len(DOCS)  # one batch = one transaction


def test_server_errors_are_one_line(server, index):
    with pytest.raises(GabaritoError) as err:
        index.client.query("SELEC 1")
    assert server.url in one_line(err) and "HTTP 400" in str(err.value)
    bad = ArcadeClient(server.url, "root", "wrong-password", "gabtest")
    with pytest.raises(GabaritoError) as err:
        bad.query("SELECT 1")
    assert "HTTP 403" in one_line(err) or "HTTP 401" in str(err.value)
    with pytest.raises(GabaritoError, match="no index metadata"):
        ArcadeIndex(index.client, "Missing").info()
    with pytest.raises(GabaritoError, match="already exists"):
        ArcadeIndex(index.client, "Concept").create(["title"], 4, "m")


def test_floor_and_queries(index):
    assert 0 < index.floor() < 5
    queries = index.queries()
    assert set(queries) == {"ddl", "ingest", "bm25", "knn", "floor"}


def test_drop_and_recreate(index):
    other = ArcadeIndex(index.client, "Scratch")
    other.create(["text"], 2, "m2")
    other.ingest([{"doc_id": "x", "text": "hello"}], [[1.0, 0.0]], progress=False)
    other.drop()
    assert not other.exists()
    with pytest.raises(GabaritoError, match="no index metadata"):
        other.info()
    assert index.count() == len(DOCS)


def test_server_killed_mid_ingest(tmp_path):
    server = ArcadeServer(tmp_path / "root", heap="1g").start()
    try:
        client = ArcadeClient(server.url, server.user, server.password, "killme")
        client.create_database()
        idx = ArcadeIndex(client, "Concept")
        idx.create(["title"], 4, "m")
        calls = {"n": 0}
        command = client.command

        def command_then_kill(sql, params=None):
            calls["n"] += 1
            if calls["n"] == 3:  # kill while the third batch is being sent
                threading.Thread(target=os.kill, args=(server.process.pid, signal.SIGKILL)).start()
            return command(sql, params)

        client.command = command_then_kill
        docs = [{"doc_id": f"doc{i:04d}", "title": f"title {i}"} for i in range(100)]
        vectors = np.random.default_rng(0).normal(size=(100, 4))
        with pytest.raises(GabaritoError) as err:
            idx.ingest(docs, vectors, batch_size=10, progress=False)
        text = one_line(err)
        assert re.search(r"stopped after (20|30) of 100 documents", text), text
        assert f"ArcadeDB at {server.url} not reachable" in text
        with pytest.raises(GabaritoError, match="not reachable"):
            idx.count()
    finally:
        assert server.stop() == -signal.SIGKILL


def test_restart_reuses_data_and_stops_cleanly(tmp_path):
    root = tmp_path / "root"
    with connect(root_dir=root, database="warm") as (client, server):
        idx = ArcadeIndex(client, "Concept")
        idx.create(["title", "body"], 4, "toy/model-4d")
        idx.ingest(DOCS, VECTORS, progress=False)
        first_password = server.password
        with pytest.raises(GabaritoError, match="still uses this root dir"):
            ArcadeServer(root).start()
    assert server.returncode == 128 + signal.SIGTERM  # the JVM's exit status after a SIGTERM shutdown
    assert "ArcadeDB Server is down" in (root / "server.log").read_text()
    assert not (root / "server.pid").exists()

    with ArcadeServer(root, heap="1g") as again:
        assert again.password == first_password
        client = ArcadeClient(again.url, again.user, again.password, "warm")
        assert client.database_exists()
        idx = ArcadeIndex(client, "Concept")
        assert idx.count() == len(DOCS)
        assert idx.info()["model_id"] == "toy/model-4d"
        assert idx.bm25("wind turbines", 1)[0][0] == "d2"
        assert idx.knn([0, 0, 0, 1], 1)[0][0] == "d4"
    assert again.process is None and again.returncode == 128 + signal.SIGTERM


def test_an_index_holding_other_vectors_is_rebuilt_not_reused(arcade_server):
    """Another encoder backend's vectors differ in their last digits; an index built from them
    must not be reused (the probe searches alone would not tell), and the run records which."""
    from gabarito.retrieval.reuse import index_record, open_or_build

    client = ArcadeClient(arcade_server.url, arcade_server.user, arcade_server.password, "reuse_vectors")
    if not client.database_exists():
        client.create_database()
    try:
        index = ArcadeIndex(client, "ReuseDoc")
        rows = [{"doc_id": f"d{i}", "text": f"documento número {i} sobre busca"} for i in range(12)]
        vectors = np.random.default_rng(3).normal(size=(12, 8)).astype(np.float32)
        parts = {"test": "reuse_vectors", "n": 12}
        build = lambda v: open_or_build(index, parts, fields=["text"], rows=rows, vectors=v, model_id="none",
                                        notice=notices.append)
        notices: list[str] = []
        assert build(vectors) == "built" and build(vectors) == "reused" and not notices
        other = vectors.copy()
        other[5, 2] = np.nextafter(other[5, 2], np.float32(np.inf))  # one float32 step
        assert build(other) == "built" and "built from other inputs" in notices[0]
        assert index_record(parts, other) != index_record(parts, vectors)
    finally:
        client.drop_database()
        client.close()
