"""Fast tests of the ArcadeDB engine that need no ArcadeDB server."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from gabarito.retrieval.arcadedb import ArcadeClient, ArcadeIndex, ArcadeServer, connect, lucene_escape, schema_sql
from gabarito.retrieval.arcadedb.client import _reason
from gabarito.errors import GabaritoError

SPECIALS = '+-!(){}[]^"~*?:\\/&|'


def one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text and "\r" not in text
    return text


# -- lucene_escape ---------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, escaped", [
    ("what is this?", r"what is this\?"),
    ("ratio: 3/4", r"ratio\: 3\/4"),
    ('say "hello"', r'say \"hello\"'),
    ("f(x) [a] {b}", r"f\(x\) \[a\] \{b\}"),
    ("cats AND dogs OR NOT birds", "cats and dogs or not birds"),
    ("ANDROID NOTES ORACLE", "ANDROID NOTES ORACLE"),
    ("C:\\path", r"C\:\\path"),
    ("a && b || !c", r"a \&\& b \|\| \!c"),
    ("+must -not ^2 ~fuzzy wild*", r"\+must \-not \^2 \~fuzzy wild\*"),
    ("what's up", "what's up"),
    ("", ""),
])
def test_lucene_escape(raw, escaped):
    assert lucene_escape(raw) == escaped


@pytest.mark.parametrize("char", list(SPECIALS))
def test_every_special_character_is_escaped(char):
    assert lucene_escape(f"a{char}b") == f"a\\{char}b"


def test_escaped_question_has_no_bare_operator():
    out = lucene_escape('"what\'s (this)? a: [test]" AND -x NOT y OR z')
    for i, ch in enumerate(out):
        if ch in SPECIALS and ch != "\\":
            assert out[i - 1] == "\\", (out, i)
    assert " AND " not in out and " OR " not in out and " NOT " not in out


# -- errors without a server ------------------------------------------------------------------------

@pytest.fixture
def closed_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_unreachable_server_is_one_line_naming_url(closed_url):
    client = ArcadeClient(closed_url, "root", "pw", "db", timeout=5)
    for call in (lambda: client.query("SELECT 1"), lambda: client.command("SELECT 1"), client.ping,
                 client.database_exists, client.create_database):
        with pytest.raises(GabaritoError) as err:
            call()
        text = one_line(err)
        assert f"ArcadeDB at {closed_url} not reachable" in text
        assert "Connection refused" in text or "Errno" in text


def test_ingest_into_unreachable_server_names_progress(closed_url):
    index = ArcadeIndex(ArcadeClient(closed_url, "root", "pw", "db", timeout=5), "Concept")
    index._info = {"model_id": "m", "dim": 2, "fields": ["title"], "text_index": "Concept[title]",
                   "vector_index": "Concept[embedding]"}
    with pytest.raises(GabaritoError) as err:
        index.ingest([{"doc_id": "a", "title": "x"}], [[1.0, 0.0]], progress=False)
    text = one_line(err)
    assert "stopped after 0 of 1 documents" in text and closed_url in text


def test_bm25_without_words_does_not_query(closed_url):
    index = ArcadeIndex(ArcadeClient(closed_url, "root", "pw", "db"), "Concept")
    index._info = {"text_index": "Concept[title]"}
    assert index.bm25("??? :: ()", 10) == []
    assert index.bm25("anything", 0) == []


class _FakeArcade(BaseHTTPRequestHandler):
    delay = 0.0

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(self.delay)
        body = json.dumps({"error": "Cannot execute command", "exception": "x.CommandSQLParsingException",
                           "detail": "SQL syntax error at line 1,\ncolumn 0: no viable alternative"})
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_url():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _FakeArcade)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_http_error_carries_server_message_on_one_line(fake_url):
    with pytest.raises(GabaritoError) as err:
        ArcadeClient(fake_url, "root", "pw", "db").query("SELEC 1")
    text = one_line(err)
    assert fake_url in text and "HTTP 400" in text and "no viable alternative" in text and "SELEC 1" in text


def test_slow_server_times_out_on_one_line(fake_url, monkeypatch):
    monkeypatch.setattr(_FakeArcade, "delay", 1.0)
    with pytest.raises(GabaritoError) as err:
        ArcadeClient(fake_url, "root", "pw", "db", timeout=0.2).query("SELECT 1")
    assert fake_url in one_line(err) and "within 0.2s" in str(err.value)


def test_reason_extracts_errno():
    exc = Exception("HTTPConnectionPool(host='x', port=1): Max retries exceeded (Caused by NewConnectionError("
                    "'<obj>: Failed to establish a new connection: [Errno 111] Connection refused'))")
    assert _reason(exc) == "[Errno 111] Connection refused"


# -- validation before any request ------------------------------------------------------------------

def _offline_index(closed_url: str) -> ArcadeIndex:
    index = ArcadeIndex(ArcadeClient(closed_url, "root", "pw", "db"), "Concept")
    index._info = {"model_id": "model-a", "dim": 3, "fields": ["title"], "text_index": "Concept[title]",
                   "vector_index": "Concept[embedding]"}
    return index


def test_model_and_dimension_checks(closed_url):
    index = _offline_index(closed_url)
    with pytest.raises(GabaritoError) as err:
        index.check_model("model-b", 3)
    assert "model-a" in one_line(err) and "model-b" in str(err.value)
    with pytest.raises(GabaritoError) as err:
        index.knn([1.0, 0.0], 5)
    assert "(2 dims)" in one_line(err) and "(3 dims)" in str(err.value)
    with pytest.raises(GabaritoError):
        index.knn([0.0, 0.0, 0.0], 5)
    with pytest.raises(GabaritoError):
        index.knn([1.0, 0.0, 0.0], 5, model_id="model-b")


def test_ingest_validation(closed_url):
    index = _offline_index(closed_url)
    with pytest.raises(GabaritoError, match="need 1 vectors of 3 dims"):
        index.ingest([{"doc_id": "a", "title": "t"}], np.zeros((1, 2)), progress=False)
    with pytest.raises(GabaritoError, match="record b: vector has NaN"):
        index.ingest([{"doc_id": "a"}, {"doc_id": "b"}], [[1, 0, 0], [np.nan, 0, 0]], progress=False)
    with pytest.raises(GabaritoError, match="record 0: document has no doc_id"):
        index.ingest([{"title": "t"}], [[1, 0, 0]], progress=False)
    with pytest.raises(GabaritoError, match="record a: field title is int"):
        index.ingest([{"doc_id": "a", "title": 3}], [[1, 0, 0]], progress=False)


def test_identifiers_are_validated(closed_url):
    with pytest.raises(GabaritoError):
        ArcadeIndex(ArcadeClient(closed_url, "root", "pw", "db"), "Concept; DROP TYPE X")
    with pytest.raises(GabaritoError):
        ArcadeClient(closed_url, "root", "pw", "db/../x")
    index = ArcadeIndex(ArcadeClient(closed_url, "root", "pw", "db"), "Concept")
    for fields in (["title", "distance"], [], ["a b"], ["t", "t"]):
        with pytest.raises(GabaritoError):
            index.create(fields, 4, "m")


def test_index_type_name_has_no_default(closed_url):
    client = ArcadeClient(closed_url, "root", "pw", "db")
    with pytest.raises(TypeError):
        ArcadeIndex(client)  # the engine knows no study's type: every caller names its own
    assert ArcadeIndex(client, "Doc").type_name == "Doc"


def test_schema_sql():
    ddl = schema_sql("Concept", ["title", "body"], 384)
    assert "CREATE INDEX ON Concept (title, body) FULL_TEXT" in ddl
    assert ("CREATE INDEX ON Concept (embedding) LSM_VECTOR METADATA "
            "{dimensions: 384, similarity: 'COSINE', quantization: 'INT8'}") in ddl


def test_connect_to_url_needs_password(monkeypatch):
    monkeypatch.delenv("GABARITO_ARCADEDB_PASSWORD", raising=False)
    monkeypatch.setenv("GABARITO_ARCADEDB_URL", "http://127.0.0.1:9")
    with pytest.raises(GabaritoError) as err:
        connect(database="db")
    assert "http://127.0.0.1:9" in one_line(err) and "GABARITO_ARCADEDB_PASSWORD" in str(err.value)


def test_password_file_is_private_and_reused(tmp_path):
    first = ArcadeServer(tmp_path)._load_password()
    mode = stat.S_IMODE(os.stat(tmp_path / "root-password").st_mode)
    assert mode == 0o600 and len(first) >= 24
    assert ArcadeServer(tmp_path)._load_password() == first
    other = tmp_path / "other"
    (other / "config").mkdir(parents=True)
    (other / "config" / "server-users.jsonl").write_text("{}\n")
    with pytest.raises(GabaritoError, match="password file is missing"):
        ArcadeServer(other)._load_password()
