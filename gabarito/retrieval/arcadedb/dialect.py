"""The few statements that differ between ArcadeDB versions, and an index that speaks each.

Checked against real servers from the ``arcadedb-embedded`` wheels:

* **26.7 and later** (what :class:`~gabarito.retrieval.arcadedb.index.ArcadeIndex` is written
  for): kNN through ``vector.neighbors(index, vector, k)``; ``INSERT ... CONTENT :rows`` inserts
  a whole list; the ``FULL_TEXT`` ``$score`` is Lucene's BM25.
* **26.3.2** (the last wheel with the built-in high availability, ``com.arcadedb.server.ha``):
  the SQL parser reads ``vector.neighbors(...)`` as a method call on a field named ``vector``
  ("Unknown method name: neighbors"); the same function answers as ``vectorNeighbors(...)``.
  ``INSERT ... CONTENT :rows`` with a list inserts only its first element, so a batch goes as
  one ``sqlscript`` transaction (``BEGIN; INSERT ... CONTENT :r0; ...; COMMIT;``, every row a
  bound parameter): all of the batch or none of it, one commit (and, in a cluster, one quorum). ``$score`` is the number of query terms a document matches, not BM25: rankings
  of the two families are not comparable, only runs of one version with each other.

:func:`dialect_for` maps a server's version string to its :class:`Dialect`;
:class:`VersionedIndex` is an :class:`ArcadeIndex` that sends that dialect's statements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from gabarito.retrieval.arcadedb.client import ArcadeClient
from gabarito.retrieval.arcadedb.index import ArcadeIndex


@dataclass(frozen=True)
class Dialect:
    """What one family of ArcadeDB versions accepts."""

    name: str
    knn_function: str     # the SQL name of the kNN function
    batch_insert: bool    # INSERT ... CONTENT :rows takes a whole list
    text_score: str       # what FULL_TEXT $score is: "bm25" or "matched terms"

    def knn_sql(self, type_name: str, vector_index: str) -> str:
        return (f"SELECT doc_id, distance FROM (SELECT expand({self.knn_function}('{vector_index}', :v, :k)))")


CURRENT = Dialect("26.7+", "vector.neighbors", batch_insert=True, text_score="bm25")
HA_LEGACY = Dialect("26.3", "vectorNeighbors", batch_insert=False, text_score="matched terms")
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(version: str) -> tuple[int, int, int] | None:
    m = _VERSION.search(version or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


def dialect_for(version: str) -> Dialect:
    """The dialect of a server reporting ``version`` (e.g. ``"26.3.2 (build ...)"``): before 26.7,
    :data:`HA_LEGACY`; from 26.7 on, or when the version cannot be read, :data:`CURRENT`."""
    parsed = parse_version(version)
    return HA_LEGACY if parsed is not None and parsed < (26, 7, 0) else CURRENT


class _OneTransaction:
    """The client as :meth:`ArcadeIndex.ingest` sees it on a server that cannot insert a list:
    the batch INSERT is sent as one ``sqlscript`` transaction of single-row INSERTs. Every
    other call goes to the real client."""

    def __init__(self, client: ArcadeClient, insert_sql: str):
        self._client, self._insert = client, insert_sql

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def command(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        if sql != self._insert or not params or "rows" not in params:
            return self._client.command(sql, params)
        rows = params["rows"]
        one = sql.replace("CONTENT :rows RETURN @rid", "CONTENT :r{i}")
        script = "BEGIN;\n" + "".join(one.format(i=i) + ";\n" for i in range(len(rows))) + "COMMIT;"
        body = {"language": "sqlscript", "command": script, "params": {f"r{i}": r for i, r in enumerate(rows)}}
        what = f"a transaction of {len(rows)} INSERTs on database '{self._client.database}'"
        self._client._request("POST", f"/api/v1/command/{self._client.database}", what, json=body)
        return [{} for _ in rows]  # committed: every row of the batch is in


class VersionedIndex(ArcadeIndex):
    """An :class:`ArcadeIndex` that sends the statements of ``dialect`` (asked of the server when
    not given): the kNN function's name, and a batch as one transaction where lists are not taken."""

    def __init__(self, client: ArcadeClient, type_name: str, *, dialect: Dialect | None = None, **kw: Any):
        super().__init__(client, type_name, **kw)
        self.dialect = dialect if dialect is not None else dialect_for(client.server_version())

    @property
    def sql_knn(self) -> str:
        return self.dialect.knn_sql(self.type_name, self.info()["vector_index"])

    def ingest(self, docs: Sequence[dict[str, Any]], vectors: Any, batch_size: int = 200,
               progress: bool = True) -> int:
        if self.dialect.batch_insert:
            return super().ingest(docs, vectors, batch_size=batch_size, progress=progress)
        real = self.client
        self.client = _OneTransaction(real, f"INSERT INTO {self.type_name} CONTENT :rows RETURN @rid")
        try:
            return super().ingest(docs, vectors, batch_size=batch_size, progress=progress)
        finally:
            self.client = real

    def queries(self) -> dict[str, Any]:
        return {**super().queries(), "dialect": self.dialect.name, "text_score": self.dialect.text_score}
