"""Run fixed SQL on one ``arcadedb-embedded`` version: build a FULL_TEXT index, answer BM25 queries.

    <venv>/bin/python case-studies/benchmark_rrf/version_worker.py JOB.json OUT.json

Started by ``version_sensitivity.py`` inside a bare virtual environment that holds one version of
``arcadedb-embedded`` (``scripts/version_venvs.sh``). The job file carries everything that is
decided elsewhere: the DDL, the INSERT and the BM25 SELECT (built by the project's library in the
parent), the rows, the questions already escaped for Lucene, and the number of rows to fetch. This
script only executes them and reports what the engine returned, unsorted and unranked: ranking
(score, then doc id) and every measure are the parent's job.

Two modes:

* ``server``: a real ArcadeDB server from this venv's wheel (its ``jre/`` and ``jars/``), started
  by the project's :class:`gabarito.retrieval.arcadedb.ArcadeServer` (127.0.0.1, free port,
  generated password) and queried over HTTP with :class:`~gabarito.retrieval.arcadedb.ArcadeClient`.
  The ``gabarito`` package comes from the repository (the parent puts it on ``PYTHONPATH``), not
  installed in the venv; it needs only numpy, requests and tqdm there.
* ``embedded``: the wheel's in-process Python API (``import arcadedb_embedded``), same SQL; for
  wheels without a server jar (26.7.2).

Job keys: ``mode`` (``server``, ``embedded`` or ``auto``), ``work_dir``,
``database``, ``type_name``, ``ddl`` (list; the statement with `` FULL_TEXT`` returns the index
name), ``insert_rows`` (binds a list ``:rows``) and ``insert_row`` (binds one ``:row``), ``batch``
(rows per transaction), ``rows``, ``post_ddl`` (optional: statements run after the inserts), ``bm25`` (``{index}`` is replaced by the index name; binds ``:q``
and ``:k``), ``queries`` (``[{"id", "q"}]``), ``fetch``, ``explain`` (bool: also the EXPLAIN text
of every query, whose ``SCORING`` line holds the engine's corpus statistics), ``jvm_processors``
(optional, in-process only: ``-XX:ActiveProcessorCount``).
The output holds the engine version, the mode, the type's buckets, the index name, ``results``
(``{id: [[doc_id, score], ...]}`` as returned) and ``explain`` (``{id: plan text}``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


def _jars(package: Path) -> list[str]:
    return sorted(p.name for p in (package / "jars").glob("*.jar")
                  if p.name.startswith(("arcadedb-engine", "arcadedb-server", "lucene-core")))


def wheel_dir() -> Path:
    """Folder of this interpreter's ``arcadedb_embedded`` (found without starting its JVM)."""
    spec = importlib.util.find_spec("arcadedb_embedded")
    if spec is None or spec.origin is None:
        raise SystemExit("error: arcadedb_embedded is not installed in this interpreter")
    return Path(spec.origin).parent


def has_server_jar(package: Path) -> bool:
    return any((package / "jars").glob("arcadedb-server-*.jar"))


class EmbeddedSession:
    """The in-process database, with ``command``/``query`` returning lists of dicts."""

    def __init__(self, path: Path, processors: int | None):
        if processors:
            os.environ["ARCADEDB_JVM_ARGS"] = f"-Xmx2g -XX:ActiveProcessorCount={int(processors)}"
        import arcadedb_embedded

        self.db = arcadedb_embedded.create_database(str(path))
        import jpype

        self.engine_version = str(jpype.JClass("com.arcadedb.Constants").getVersion())

    @staticmethod
    def _rows(result) -> list[dict]:
        return [] if result is None else result.to_list()

    def command(self, sql: str, params: dict | None = None) -> list[dict]:
        return self._rows(self.db.command("sql", sql, params) if params else self.db.command("sql", sql))

    def query(self, sql: str, params: dict | None = None) -> list[dict]:
        return self._rows(self.db.query("sql", sql, params) if params else self.db.query("sql", sql))

    def insert(self, job: dict) -> None:
        """One INSERT per row (this API binds a list as one record), ``batch`` rows per transaction."""
        rows, batch = job["rows"], int(job["batch"])
        for start in range(0, len(rows), batch):
            with self.db.transaction():
                for row in rows[start:start + batch]:
                    self.db.command("sql", job["insert_row"], {"row": row})

    def explain(self, sql: str, params: dict) -> str:
        rows = self.query("EXPLAIN " + sql, params)
        return str(rows[0].get("executionPlanAsString", "")) if rows else ""

    def close(self) -> None:
        self.db.close()


class ServerSession:
    """A server of this venv's wheel, started and reached with the project's own classes."""

    def __init__(self, root: Path, database: str):
        from gabarito.retrieval.arcadedb import ArcadeClient, ArcadeServer

        self.server = ArcadeServer(root, heap="2g").start()
        self.engine_version = self.server.version
        self.client = ArcadeClient(self.server.url, self.server.user, self.server.password, database)
        self.client.create_database()

    def command(self, sql: str, params: dict | None = None) -> list[dict]:
        return self.client.command(sql, params)

    def query(self, sql: str, params: dict | None = None) -> list[dict]:
        return self.client.query(sql, params)

    def insert(self, job: dict) -> None:
        """``batch`` rows per INSERT (one transaction each), as the flagship ingests; 1: one row each."""
        rows, batch = job["rows"], int(job["batch"])
        for start in range(0, len(rows), batch):
            chunk = rows[start:start + batch]
            if batch == 1:
                self.client.command(job["insert_row"], {"row": chunk[0]})
            else:
                self.client.command(job["insert_rows"], {"rows": chunk})

    def explain(self, sql: str, params: dict) -> str:
        """The plan text, which the HTTP API returns beside (not in) the result."""
        resp = self.client.session.post(f"{self.client.url}/api/v1/query/{self.client.database}",
                                        json={"language": "sql", "command": "EXPLAIN " + sql, "params": params},
                                        timeout=self.client.timeout)
        resp.raise_for_status()
        return str(resp.json().get("explain", ""))

    def close(self) -> None:
        self.client.close()
        self.server.stop()


def build(session, job: dict) -> tuple[str, float]:
    """Run the DDL and the inserts; return the FULL_TEXT index name and the seconds taken."""
    t0 = time.perf_counter()
    index = None
    for step in ("ddl", "insert", "post_ddl"):
        if step == "insert":
            session.insert(job)
            continue
        for sql in job.get(step, []):
            result = session.command(sql)
            if " FULL_TEXT" in sql:
                index = str(result[0]["name"])
    if index is None:
        raise SystemExit("error: the job's DDL creates no FULL_TEXT index")
    return index, time.perf_counter() - t0


def search(session, job: dict, index: str) -> tuple[dict, dict]:
    """Each query's rows as returned (``[doc_id, score]``) and, if asked, its EXPLAIN text."""
    sql = job["bm25"].replace("{index}", index)
    results, plans = {}, {}
    for item in job["queries"]:
        params = {"q": item["q"], "k": int(job["fetch"])}
        results[item["id"]] = [[str(r["doc_id"]), float(r["score"])] for r in session.query(sql, params)]
        if job.get("explain"):
            plans[item["id"]] = session.explain(sql, params)
    return results, plans


def run(job: dict) -> dict:
    package = wheel_dir()
    mode = job.get("mode", "auto")
    if mode == "auto":
        mode = "server" if has_server_jar(package) else "embedded"
    if mode == "server" and not has_server_jar(package):
        raise SystemExit(f"error: {package}: this wheel ships no arcadedb-server jar; use mode 'embedded'")
    work = Path(tempfile.mkdtemp(prefix="arcadedb-version-", dir=job.get("work_dir")))
    try:
        if mode == "server":
            session = ServerSession(work / "server", job["database"])
        else:
            session = EmbeddedSession(work / job["database"], job.get("jvm_processors"))
        try:
            index, build_s = build(session, job)
            count = session.query(f"SELECT count(*) AS n FROM {job['type_name']}")[0]["n"]
            buckets = session.query("SELECT buckets FROM schema:types WHERE name = :n",
                                    {"n": job["type_name"]})[0]["buckets"]
            results, plans = search(session, job, index)
        finally:
            session.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "package_version": importlib.metadata.version("arcadedb-embedded"),
        "engine_version": session.engine_version,
        "jars": _jars(package),
        "mode": mode,
        "python": sys.version.split()[0],
        "index": index,
        "documents": int(count),
        "buckets": [str(b) for b in buckets],
        "build_s": round(build_s, 3),
        "results": results,
        "explain": plans,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    job = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    out = run(job)
    tmp = Path(argv[1]).with_suffix(".tmp")
    tmp.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, argv[1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
