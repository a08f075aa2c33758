"""One ArcadeDB document type seen as a search index: its schema (a Lucene ``FULL_TEXT`` index
for BM25, an ``LSM_VECTOR`` index for cosine kNN), ingest, the two searches and the warm-up."""

from __future__ import annotations

import re
import time
from typing import Any, Sequence

import numpy as np

from gabarito.errors import GabaritoError, stderr_line
from gabarito.progress import bar as progress_bar
from gabarito.retrieval.arcadedb.analyzers import analyzer_class, lucene_escape
from gabarito.retrieval.arcadedb.client import ArcadeClient
from gabarito.core.runs import by_score
from gabarito.retrieval.protocol import current_question

INFO_TYPE = "IndexInfo"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RESERVED = {"doc_id", "embedding", "distance", "score", "record"}
_WORD = re.compile(r"\w+")
#: Lucene's limit on the clauses of one query (every word of a question is one, repeats too).
MAX_CLAUSES = 1024


def _identifier(name: str, what: str) -> str:
    if not isinstance(name, str) or not _IDENT.match(name):
        raise GabaritoError(f"{what} {name!r} is not a plain identifier (letters, digits, _)")
    return name


def schema_sql(type_name: str, text_fields: Sequence[str], dim: int, analyzer: str | None = None) -> list[str]:
    """The DDL :meth:`ArcadeIndex.create` runs (identifiers are validated, never user text).

    ``analyzer`` (see :func:`analyzer_class`) goes into the FULL_TEXT index as
    ``METADATA {"analyzer": "<class>"}``, used both to index and to parse queries; ``None``
    leaves ArcadeDB's default (StandardAnalyzer: lower-case, no stemming, no stop words)."""
    t = type_name
    cls = analyzer_class(analyzer)
    full_text = f"CREATE INDEX ON {t} ({', '.join(text_fields)}) FULL_TEXT"
    if cls is not None:
        full_text += f' METADATA {{"analyzer": "{cls}"}}'
    return [
        f"CREATE DOCUMENT TYPE {t}",
        f"CREATE PROPERTY {t}.doc_id STRING",
        *(f"CREATE PROPERTY {t}.{field} STRING" for field in text_fields),
        f"CREATE PROPERTY {t}.embedding ARRAY_OF_FLOATS",
        f"CREATE INDEX ON {t} (doc_id) UNIQUE",
        full_text,
        f"CREATE INDEX ON {t} (embedding) LSM_VECTOR METADATA "
        f"{{dimensions: {int(dim)}, similarity: 'COSINE', quantization: 'INT8'}}",
        f"CREATE DOCUMENT TYPE {INFO_TYPE} IF NOT EXISTS",
    ]


class ArcadeIndex:
    """One ArcadeDB document type used as a search index (BM25 over text, cosine kNN over vectors).

    ``type_name`` (a plain identifier) is the document type; each caller names its own, so that
    several indexes can share one database. Results are ``(doc_id, score)`` lists, best first,
    ties broken by ``doc_id``. For BM25 the score is Lucene's ``$score``; for kNN it is cosine
    similarity, ``1 - distance`` as returned by ``vector.neighbors`` for a COSINE index. BM25
    binds ``:k`` to ``k + tie_margin`` so that documents tied at the cut are ordered by id, not by
    storage order.

    A question of more than :data:`MAX_CLAUSES` words is searched with its first
    :data:`MAX_CLAUSES` (one line through ``notice``, stderr by default, naming the question).
    Every search runs under ``search_timeout`` seconds (the client's timeout unless given): the
    server is told to stop (SQL ``TIMEOUT``) and the client stops waiting; either way one line
    names the question.
    """

    def __init__(self, client: ArcadeClient, type_name: str, *, tie_margin: int = 10,
                 notice=None, search_timeout: float | None = None):
        self.client = client
        self.type_name = _identifier(type_name, "type name")
        self.tie_margin = tie_margin
        self.notice = notice or stderr_line
        self.search_timeout = search_timeout
        self._info: dict[str, Any] | None = None

    def where(self) -> str:
        return f"ArcadeDB at {self.client.url}, database '{self.client.database}', type {self.type_name}"

    # -- schema ---------------------------------------------------------------------------------
    def _type_exists(self, name: str) -> bool:
        return bool(self.client.query("SELECT name FROM schema:types WHERE name = :n", {"n": name}))

    def exists(self) -> bool:
        return self._type_exists(self.type_name)

    def create(self, text_fields: Sequence[str], dim: int, model_id: str,
               extra: dict[str, Any] | None = None, *, analyzer: str | None = None) -> None:
        """Create the type, its three indexes and the metadata record (fails if the type exists).

        ``extra`` is stored in the metadata record too (e.g. the corpus sha256), so that a later
        run can tell whether the stored index is the one it needs. ``analyzer`` names the Lucene
        analyzer of the FULL_TEXT index (a short name from :data:`ANALYZERS`, such as
        ``"portuguese"``, or a class name); ``None`` keeps ArcadeDB's StandardAnalyzer. The
        class name is stored as ``analyzer`` in the metadata record (``None`` for the default).
        If the server refuses a statement (e.g. an analyzer class it cannot load), the
        half-made type is dropped again before the error is raised."""
        analyzer = analyzer_class(analyzer)
        fields = [_identifier(f, "text field") for f in text_fields]
        clash = sorted(set(fields) & _RESERVED)
        if not fields or clash or len(set(fields)) != len(fields):
            raise GabaritoError(f"{self.where()}: text fields {fields} must be distinct, non-empty "
                                f"and avoid {sorted(_RESERVED)}")
        if int(dim) < 1:
            raise GabaritoError(f"{self.where()}: vector dimension must be positive, not {dim}")
        if self.exists():
            raise GabaritoError(f"{self.where()}: the type already exists; drop it or use another database")
        names = {}
        try:
            for sql in schema_sql(self.type_name, fields, dim, analyzer):
                result = self.client.command(sql)
                if " FULL_TEXT" in sql or " LSM_VECTOR " in sql:
                    names["text_index" if " FULL_TEXT" in sql else "vector_index"] = result[0]["name"]
        except GabaritoError:
            try:  # the type did not exist before this call: do not leave it half made
                if self.exists():
                    self.client.command(f"DROP TYPE {self.type_name} UNSAFE")
            except GabaritoError:
                pass
            raise
        info = {**(extra or {}), "type_name": self.type_name, "model_id": model_id, "dim": int(dim),
                "fields": fields, "analyzer": analyzer, **names}
        self.client.command(f"INSERT INTO {INFO_TYPE} CONTENT :info", {"info": info})
        self._info = info

    def drop(self) -> None:
        """Remove the type (with its records and indexes) and its metadata record."""
        if self.exists():
            self.client.command(f"DROP TYPE {self.type_name} UNSAFE")
        if self._type_exists(INFO_TYPE):
            self.client.command(f"DELETE FROM {INFO_TYPE} WHERE type_name = :t", {"t": self.type_name})
        self._info = None

    def stored_info(self) -> dict[str, Any] | None:
        """The metadata record as stored now (read afresh), ``None`` when there is none."""
        rows = []
        if self._type_exists(INFO_TYPE):
            rows = self.client.query(f"SELECT FROM {INFO_TYPE} WHERE type_name = :t", {"t": self.type_name})
        if len(rows) != 1:
            return None
        self._info = {k: v for k, v in rows[0].items() if not k.startswith("@")}
        self._info.setdefault("analyzer", None)
        return self._info

    def info(self) -> dict[str, Any]:
        """The stored metadata (model_id, dim, fields, analyzer, index names), read once then cached.

        ``analyzer`` is the Lucene class of the FULL_TEXT index, ``None`` for ArcadeDB's default
        (also for indexes created before the analyzer was recorded)."""
        if self._info is None and self.stored_info() is None:
            raise GabaritoError(f"{self.where()}: no index metadata (its build was interrupted or the record is "
                                f"damaged); build it again (gabarito drops and rebuilds it) or drop the type")
        return self._info

    def seal(self, record: dict[str, Any]) -> None:
        """Store ``record`` as the completion record (``complete``): the last write of a build."""
        self.client.command(f"UPDATE {INFO_TYPE} SET complete = :c WHERE type_name = :t",
                            {"c": record, "t": self.type_name})
        if (self.stored_info() or {}).get("complete") != record:
            raise GabaritoError(f"{self.where()}: the completion record did not read back as written")

    def check_model(self, model_id: str, dim: int) -> None:
        """Refuse queries embedded with another model or dimension than the stored vectors."""
        info = self.info()
        if model_id != info["model_id"] or int(dim) != int(info["dim"]):
            raise GabaritoError(f"{self.where()}: the index holds {info['model_id']} vectors ({info['dim']} dims), "
                                f"the query uses {model_id} ({dim} dims)")

    # -- data -----------------------------------------------------------------------------------
    def ingest(self, docs: Sequence[dict[str, Any]], vectors: Any, batch_size: int = 200,
               progress: bool = True) -> int:
        """Insert ``docs`` (``doc_id`` + text fields) with one vector each, one INSERT per batch."""
        info = self.info()
        fields, dim = info["fields"], int(info["dim"])
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(docs) or vecs.shape[1] != dim:
            raise GabaritoError(f"{self.where()}: need {len(docs)} vectors of {dim} dims, got shape {vecs.shape}")
        finite = np.isfinite(vecs).all(axis=1)
        if not finite.all():
            bad = int(np.argmin(finite))
            raise GabaritoError("vector has NaN or infinite values", record=docs[bad].get("doc_id", bad))
        sql = f"INSERT INTO {self.type_name} CONTENT :rows RETURN @rid"
        done = 0
        with progress_bar(total=len(docs), unit="doc", desc=f"indexing {self.type_name}", show=progress) as bar:
            for start in range(0, len(docs), batch_size):
                rows = [self._row(docs[i], i, fields) for i in range(start, min(start + batch_size, len(docs)))]
                for row, vec in zip(rows, vecs[start:start + len(rows)]):
                    row["embedding"] = vec.tolist()
                try:
                    inserted = len(self.client.command(sql, {"rows": rows}))
                except GabaritoError as exc:  # keeps its class: a refusal stays a ServerError
                    raise type(exc)(f"ingest into {self.type_name} stopped after {done} of {len(docs)} documents "
                                    f"(batch starting at {rows[0]['doc_id']!r}): {exc}") from exc
                if inserted != len(rows):
                    raise GabaritoError(f"{self.where()}: inserted {inserted} of a batch of {len(rows)}")
                done += inserted
                bar.update(inserted)
        return done

    @staticmethod
    def _row(doc: dict[str, Any], i: int, fields: Sequence[str]) -> dict[str, Any]:
        doc_id = doc.get("doc_id")
        if not isinstance(doc_id, str) or not doc_id:
            raise GabaritoError("document has no doc_id string", record=i)
        row: dict[str, Any] = {"doc_id": doc_id}
        for field in fields:
            value = doc.get(field)
            if value is not None and not isinstance(value, str):
                raise GabaritoError(f"field {field} is {type(value).__name__}, expected text", record=doc_id)
            row[field] = value
        return row

    def count(self) -> int:
        """The record count ArcadeDB keeps in its metadata (not what the records say: see
        :meth:`scan_count`)."""
        return int(self.client.query(f"SELECT count(*) AS n FROM {self.type_name}")[0]["n"])

    def scan_count(self) -> int:
        """The records a scan of the type reads (a ``WHERE`` keeps ``count(*)`` from answering
        out of the metadata, which still says 75 when the bucket file is empty)."""
        sql = f"SELECT count(*) AS n FROM {self.type_name} WHERE doc_id IS NOT NULL"
        return int(self.client.query(sql)[0]["n"])

    def stored_ids(self) -> list[str]:
        """The ``doc_id`` of every record, as a scan of the type reads them (not through the
        ``doc_id`` index, which still holds the id that was written when a record was garbled)."""
        return [r.get("doc_id") for r in self.client.query(f"SELECT doc_id FROM {self.type_name}")]

    def records(self, doc_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``{doc_id: {doc_id, <text fields>}}`` of the records with these ids (found through the
        ``doc_id`` index)."""
        fields = ", ".join(["doc_id", *self.info()["fields"]])
        rows = self.client.query(f"SELECT {fields} FROM {self.type_name} WHERE doc_id IN :ids", {"ids": list(doc_ids)})
        return {r.get("doc_id"): r for r in rows}

    # -- search ---------------------------------------------------------------------------------
    @property
    def sql_bm25(self) -> str:
        index = self.info()["text_index"]
        return (f"SELECT doc_id, $score AS score FROM {self.type_name} "
                f"WHERE SEARCH_INDEX('{index}', :q) = true ORDER BY score DESC LIMIT :k")

    @property
    def sql_knn(self) -> str:
        index = self.info()["vector_index"]
        return f"SELECT doc_id, distance FROM (SELECT expand(vector.neighbors('{index}', :v, :k)))"

    sql_floor = "SELECT 1 AS one"

    def queries(self) -> dict[str, Any]:
        """The exact SQL sent to the server, for the report."""
        info = self.info()
        return {"ddl": schema_sql(self.type_name, info["fields"], info["dim"], info.get("analyzer")),
                "ingest": f"INSERT INTO {self.type_name} CONTENT :rows RETURN @rid",
                "bm25": self.sql_bm25, "knn": self.sql_knn, "floor": self.sql_floor}

    def _timed(self, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Run a search under ``search_timeout``: told to the server (``TIMEOUT``, in ms) and
        kept by the client (a bound on the whole answer, not on each read of the socket)."""
        seconds = self.search_timeout if self.search_timeout is not None else self.client.timeout
        limit = "" if " LIMIT " in sql.upper() else " LIMIT :k"  # the HTTP API adds one, after TIMEOUT
        return self.client.query(f"{sql}{limit} TIMEOUT {max(1, int(seconds * 1000))}", params, timeout=seconds)

    def clip(self, question: str) -> str:
        """``question`` cut to its first :data:`MAX_CLAUSES` words when it has more (Lucene
        refuses such a query), with one line through ``notice`` naming the question."""
        words = _WORD.findall(question)
        if len(words) <= MAX_CLAUSES:
            return question
        asked = current_question()
        self.notice(f"{self.where()}: question {asked if asked is not None else question[:40]!r} has "
                    f"{len(words)} words, more than the {MAX_CLAUSES} terms a Lucene query takes; "
                    f"searched with its first {MAX_CLAUSES}")
        return " ".join(words[:MAX_CLAUSES])

    def bm25(self, question: str, k: int) -> list[tuple[str, float]]:
        """Lucene BM25 over all text fields; the question is escaped and bound as ``:q``."""
        if k <= 0 or not re.search(r"\w", question):
            return []  # Lucene rejects a query without a single term
        params = {"q": lucene_escape(self.clip(question)), "k": k + self.tie_margin}
        rows = self._timed(self.sql_bm25, params)
        ranked = by_score((r["doc_id"], float(r["score"])) for r in rows)
        return ranked[:k]

    def knn(self, vector: Any, k: int, *, model_id: str | None = None) -> list[tuple[str, float]]:
        """Approximate cosine kNN through the LSM_VECTOR index; scores are cosine similarities."""
        vec = np.asarray(vector, dtype=np.float32)
        if vec.ndim != 1:
            raise GabaritoError(f"{self.where()}: query vector must be one-dimensional, got shape {vec.shape}")
        self.check_model(self.info()["model_id"] if model_id is None else model_id, vec.shape[0])
        if not np.isfinite(vec).all() or not vec.any():
            raise GabaritoError(f"{self.where()}: query vector is zero or not finite")
        if k <= 0:
            return []
        rows = self._timed(self.sql_knn, {"v": vec.tolist(), "k": int(k)})
        ranked = by_score((r["doc_id"], 1.0 - float(r["distance"])) for r in rows)
        return ranked[:k]

    def floor(self) -> float:
        """Seconds for a trivial query: the HTTP round-trip floor under every measured latency."""
        start = time.perf_counter()
        self.client.query(self.sql_floor)
        return time.perf_counter() - start

    def warm_up(self, vector: Any = None, k: int = 10) -> float:
        """Run one BM25 and one vector query; the first vector query after ingest builds the
        graph and can take seconds. Returns the seconds the vector query took."""
        self.bm25("warm up", k)
        if vector is None:
            vector = np.eye(1, int(self.info()["dim"]), dtype=np.float32)[0]
        start = time.perf_counter()
        self.knn(vector, k)
        return time.perf_counter() - start
