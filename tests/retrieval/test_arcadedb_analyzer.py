"""Lucene analyzers on the ArcadeDB FULL_TEXT index, checked with real queries on a real server.

Run with ``pytest -m integration tests/test_arcadedb_analyzer.py``. The few checks that need
no server (name validation, DDL text) run in the fast suite.
"""

from __future__ import annotations

import numpy as np
import pytest

from gabarito.retrieval.arcadedb import ANALYZERS, ArcadeClient, ArcadeIndex, ArcadeServer, analyzer_class, schema_sql
from gabarito.errors import GabaritoError

PT = "org.apache.lucene.analysis.pt.PortugueseAnalyzer"
EN = "org.apache.lucene.analysis.en.EnglishAnalyzer"

DOCS = [
    {"doc_id": "p1", "body": "Política de devolução de produtos com defeito"},
    {"doc_id": "p2", "body": "Prazo de entrega para clientes de Lisboa"},
    {"doc_id": "p3", "body": "Receita de bolo de cenoura para o lanche"},
    {"doc_id": "e1", "body": "She runs every morning before work"},
    {"doc_id": "e2", "body": "The cat sat on the mat"},
]
VECTORS = np.eye(len(DOCS), 4, dtype=np.float32) + 0.01


# -- no server needed ---------------------------------------------------------------------------

def test_analyzer_names():
    assert analyzer_class(None) is None
    assert analyzer_class("portuguese") == analyzer_class(" Portuguese ") == PT
    assert analyzer_class("english") == EN and analyzer_class(EN) == EN
    assert set(ANALYZERS) >= {"standard", "english", "portuguese", "brazilian"}
    for bad in ('x"}; DROP TYPE Pt', "PortugueseAnalyzer", "org.apache..Bad", "org apache.X", ""):
        with pytest.raises(GabaritoError, match="neither one of"):
            analyzer_class(bad)


def test_schema_sql_puts_the_analyzer_in_the_full_text_metadata():
    plain = schema_sql("T", ["title", "body"], 8)
    assert "CREATE INDEX ON T (title, body) FULL_TEXT" in plain
    ddl = schema_sql("T", ["title", "body"], 8, "portuguese")
    assert f'CREATE INDEX ON T (title, body) FULL_TEXT METADATA {{"analyzer": "{PT}"}}' in ddl
    assert [s for s in ddl if "FULL_TEXT" not in s] == [s for s in plain if "FULL_TEXT" not in s]


# -- a real server --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(arcade_server):
    return arcade_server


@pytest.fixture(scope="module")
def client(server):
    client = ArcadeClient(server.url, server.user, server.password, "analyzers")
    client.create_database()
    yield client
    client.close()


@pytest.fixture(scope="module")
def indexes(client):
    made = {}
    for name, analyzer in (("Std", None), ("Pt", "portuguese"), ("En", EN)):
        idx = ArcadeIndex(client, name)
        idx.create(["body"], 4, "toy/model-4d", analyzer=analyzer)
        assert idx.ingest(DOCS, VECTORS, progress=False) == len(DOCS)
        made[name] = idx
    return made


def ids(hits):
    return sorted(doc for doc, _ in hits)


@pytest.mark.integration
def test_analyzer_is_recorded_and_reported(indexes, client):
    for name, expected in (("Std", None), ("Pt", PT), ("En", EN)):
        fresh = ArcadeIndex(client, name)  # read back from the server, not the cached dict
        assert fresh.info()["analyzer"] == expected
        full_text = [s for s in fresh.queries()["ddl"] if "FULL_TEXT" in s][0]
        if expected:
            assert full_text.endswith(f'FULL_TEXT METADATA {{"analyzer": "{expected}"}}')
        else:
            assert "METADATA" not in full_text


@pytest.mark.integration
def test_portuguese_analyzer_stems_plurals_and_accents(indexes):
    pt, std = indexes["Pt"], indexes["Std"]
    assert ids(pt.bm25("devoluções", 5)) == ["p1"]
    assert ids(pt.bm25("devolução", 5)) == ["p1"]
    assert ids(pt.bm25("produto", 5)) == ["p1"]  # "produtos" in the text
    assert std.bm25("produto", 5) == []
    assert std.bm25("devoluções", 5) == []  # the standard analyzer keeps whole words


@pytest.mark.integration
def test_portuguese_stop_words_do_not_match_everything(indexes):
    pt, std = indexes["Pt"], indexes["Std"]
    assert pt.bm25("de para o", 5) == []
    assert ids(std.bm25("de para o", 5)) == ["p1", "p2", "p3"]
    assert ids(pt.bm25("prazo de entrega para", 5)) == ["p2"]
    assert ids(std.bm25("prazo de entrega para", 5)) == ["p1", "p2", "p3"]


@pytest.mark.integration
def test_english_analyzer_stems(indexes):
    en, std = indexes["En"], indexes["Std"]
    assert ids(en.bm25("running", 5)) == ["e1"]
    assert ids(en.bm25("runs", 5)) == ["e1"]
    assert en.bm25("the on", 5) == []
    assert std.bm25("running", 5) == []
    assert ids(std.bm25("runs", 5)) == ["e1"]
    assert ids(std.bm25("the on", 5)) == ["e2"]


@pytest.mark.integration
def test_bad_analyzer_names_leave_nothing_behind(client, indexes):
    idx = ArcadeIndex(client, "Broken")
    with pytest.raises(GabaritoError, match="neither one of"):
        idx.create(["body"], 4, "m", analyzer='x"} ; DROP TYPE Pt')
    assert not idx.exists()
    with pytest.raises(GabaritoError) as err:
        idx.create(["body"], 4, "m", analyzer="org.example.NoSuchAnalyzer")
    assert "NoSuchAnalyzer" in str(err.value) and "\n" not in str(err.value)
    assert not idx.exists()  # the half-made type was dropped, so a retry works
    idx.create(["body"], 4, "m", analyzer="brazilian")
    assert idx.info()["analyzer"] == "org.apache.lucene.analysis.br.BrazilianAnalyzer"
    idx.drop()
    assert indexes["Pt"].count() == len(DOCS)


@pytest.mark.integration
def test_analyzer_survives_a_restart(tmp_path):
    root = tmp_path / "root"
    with ArcadeServer(root, heap="1g") as srv:
        client = ArcadeClient(srv.url, srv.user, srv.password, "keep")
        client.create_database()
        ArcadeIndex(client, "Pt").create(["body"], 4, "m", analyzer="portuguese")
        ArcadeIndex(client, "Pt").ingest(DOCS[:3], VECTORS[:3], progress=False)
    with ArcadeServer(root, heap="1g") as srv:
        client = ArcadeClient(srv.url, srv.user, srv.password, "keep")
        idx = ArcadeIndex(client, "Pt")
        assert idx.info()["analyzer"] == PT
        idx.ingest([{"doc_id": "p4", "body": "Devoluções aceites até sexta"}], [[0, 0, 1, 1]], progress=False)
        assert ids(idx.bm25("devolução", 5)) == ["p1", "p4"]  # old and new records both stemmed
