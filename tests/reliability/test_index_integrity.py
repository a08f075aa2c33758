"""A damaged or half-built ArcadeDB index never yields a number (issue 22, items 1, 2, 6, 7).

Every file kind of a built evaluation database is emptied, cut or garbled (the type's bucket,
the full-text index, the vector index, the metadata bucket), and every build phase is
interrupted (SIGTERM of ``gabarito evaluate`` during the DDL, after the ingest, just before the
completion record; the JVM killed during the DDL); the next ``gabarito evaluate`` must rebuild
(one notice) and find what a clean run finds, or stop with one line naming what to delete.
Then a question over Lucene's clause limit, and a search slower than its timeout.

The help-center documents with ``--method bm25``: one embedded server start per run.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.arcadedb.client import ArcadeClient

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "data" / "helpcenter" / "docs"
EVALUATION = ROOT / "data" / "helpcenter" / "evaluation.json"
integration = pytest.mark.integration


def evaluate(db: Path, log: Path, *, evaluation: Path = EVALUATION, engine: str = "arcadedb",
             hook: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """``gabarito evaluate`` as a process; ``hook`` is Python run first (a fault to inject)."""
    argv = ["evaluate", "--documents", str(DOCS), "--evaluation", str(evaluation), "--log", str(log),
            "--method", "bm25", "--engine", engine, "--db-dir", str(db)]
    code = (hook or "") + "\nimport sys\nfrom gabarito.cli import main\nsys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})}, cwd=ROOT)


def records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def returned(record: dict) -> dict:
    return {r["id"]: [(x["id"], round(x["score"], 4)) for x in r["returned"]] for r in record["per_query"]}


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("GABARITO_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("GABARITO_ARCADEDB_URL", "GABARITO_ARCADEDB_PASSWORD", "GABARITO_ARCADEDB_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A database built by a clean run (the server stopped), and that run's record."""
    if not DOCS.is_dir():
        pytest.skip("no help-center data")
    tmp = tmp_path_factory.mktemp("clean")
    db, log = tmp / "db", tmp / "log.jsonl"
    done = evaluate(db, log, env={"GABARITO_CACHE_DIR": str(tmp / "cache")})
    assert done.returncode == 0, done.stderr
    return db, records(log)[0]


def damaged_copy(clean_db: Path, target: Path, pattern: str, how: str) -> list[Path]:
    shutil.copytree(clean_db, target, ignore=shutil.ignore_patterns("server.pid", "server.lock"))
    files = sorted((target / "databases").glob(f"eval_*/{pattern}"))
    assert files, f"no {pattern} in the built database"
    for path in files:
        data = path.read_bytes()
        if how == "empty":
            path.write_bytes(b"")
        elif how == "cut":
            path.write_bytes(data[: len(data) * 2 // 3 // 4096 * 4096 + 1000])
        else:  # garble: flip bytes all through the file, keeping its size
            garbled = bytearray(data)
            for i in range(64, len(garbled), 97):
                garbled[i] ^= 0x5A
            path.write_bytes(bytes(garbled))
    return files


def assert_rebuilt_or_stopped(done: subprocess.CompletedProcess, log: Path, clean_record: dict) -> str:
    """The run rebuilt (one notice) and found what the clean run found, or stopped with one line
    naming the folder to delete and logged nothing. Returns which."""
    assert "Traceback" not in done.stderr
    if done.returncode == 0:
        assert done.stderr.count("dropping and rebuilding it") <= 1
        assert "index built" in done.stderr, done.stderr
        (record,) = records(log)
        assert returned(record) == returned(clean_record)
        assert record["summary"]["mrr"] == clean_record["summary"]["mrr"]
        return "rebuilt"
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert done.returncode == 2 and len(errors) == 1 and "delete the folder" in errors[0], done.stderr
    assert not records(log)
    return "stopped"


# (files, damage): the type's bucket, the full-text index, the vector index, the metadata bucket,
# the schema. (A garbled vector index or an emptied HNSW graph file is reused by a BM25 run, whose
# answers do not come from it, and found whole: not asserted here.)
DAMAGE = [("Chunk_0.*.bucket", "empty"), ("Chunk_0.*.bucket", "cut"), ("Chunk_0.*.bucket", "garble"),
          ("*.numtidx", "cut"), ("*.numtidx", "garble"), ("*.lsmvecidx", "empty"),
          ("IndexInfo_0.*.bucket", "empty"), ("IndexInfo_0.*.bucket", "garble"), ("schema*.json", "garble")]


@integration
@pytest.mark.parametrize(("pattern", "how"), DAMAGE, ids=[f"{p.replace('*', 'x')}-{h}" for p, h in DAMAGE])
def test_a_damaged_database_is_rebuilt_or_named_never_reused(tmp_path, clean, pattern, how):
    """Before: the type's bucket emptied gave "index reused (75 chunks)" and MRR 0.000 with exit
    0; cut to 70,000 bytes, MRR 0.811 instead of 0.817; a damaged full-text index or metadata
    bucket stopped every later run for good."""
    clean_db, clean_record = clean
    db, log = tmp_path / "db", tmp_path / "log.jsonl"
    damaged_copy(clean_db, db, pattern, how)
    done = evaluate(db, log)
    outcome = assert_rebuilt_or_stopped(done, log, clean_record)
    if outcome == "rebuilt" and not pattern.startswith("schema"):
        assert done.stderr.count("not whole") == 1  # the damage was seen, not passed over
    if (pattern, how) == ("Chunk_0.*.bucket", "cut"):  # what was rebuilt is whole: reused as such
        again = evaluate(db, log)
        assert again.returncode == 0 and "index reused" in again.stderr, again.stderr
        assert returned(records(log)[-1]) == returned(clean_record)


KILL = """
import os, signal, time
from gabarito.retrieval.arcadedb.client import ArcadeClient
real = ArcadeClient.command
def die():
    if os.environ.get("KILL_JVM"):  # the server, not gabarito
        os.kill(int(open(os.environ["KILL_JVM"]).read().split()[0]), signal.SIGKILL)
        time.sleep(1)
    else:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
def command(self, sql, params=None):
    before, after = os.environ.get("KILL_BEFORE"), os.environ.get("KILL_AFTER")
    if before and sql.startswith(before):
        die()
    out = real(self, sql, params)
    if after and sql.startswith(after):
        die()
    return out
ArcadeClient.command = command
"""

PHASES = {"ddl": {"KILL_AFTER": "CREATE INDEX ON Chunk (doc_id)"},
          "ingest": {"KILL_AFTER": "INSERT INTO Chunk"},
          "completion": {"KILL_BEFORE": "UPDATE IndexInfo SET complete"},
          "jvm-ddl": {"KILL_AFTER": "CREATE INDEX ON Chunk (text)", "KILL_JVM": "server.pid"}}


@integration
@pytest.mark.parametrize("phase", list(PHASES))
def test_an_interrupted_build_is_rebuilt_by_the_next_run(tmp_path, clean, phase):
    """Before: SIGTERM (or the JVM killed) during the DDL left `Chunk` without its metadata
    record, and every later run ended with "type Chunk: no index metadata; create the index
    first" (exit 2)."""
    db, log = tmp_path / "db", tmp_path / "log.jsonl"
    env = dict(PHASES[phase])
    if "KILL_JVM" in env:
        env["KILL_JVM"] = str(db / env["KILL_JVM"])
    killed = evaluate(db, log, hook=KILL, env=env)
    assert "Traceback" not in killed.stderr and not records(log)
    if "KILL_JVM" in env:
        assert killed.returncode == 2 and "not reachable" in killed.stderr, killed.stderr
    else:
        assert killed.returncode == 128 + signal.SIGTERM, killed.stderr
    done = evaluate(db, log)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("not whole") == 1 and "index built" in done.stderr, done.stderr
    assert returned(records(log)[0]) == returned(clean[1])


@integration
def test_sigterm_while_the_first_files_appear_then_the_next_run_finds_the_clean_answer(tmp_path, clean):
    """The issue's reproduction: SIGTERM as soon as databases/eval_*/Chunk_0.* exists."""
    db, log = tmp_path / "db", tmp_path / "log.jsonl"
    argv = [sys.executable, "-m", "gabarito.cli", "evaluate", "--documents", str(DOCS), "--evaluation",
            str(EVALUATION), "--log", str(log), "--method", "bm25", "--engine", "arcadedb", "--db-dir", str(db)]
    run = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 300
        while not list(db.glob("databases/eval_*/Chunk_0.*")) and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        run.send_signal(signal.SIGTERM)
        run.communicate(timeout=120)
    finally:
        run.kill()
    done = evaluate(db, log)
    assert done.returncode == 0 and "index " in done.stderr, done.stderr
    assert returned(records(log)[-1]) == returned(clean[1])


@integration
def test_a_database_the_server_cannot_open_stops_with_one_line_naming_the_folder(tmp_path, clean):
    """When even dropping the damaged index fails, the run names the folder to delete."""
    db, log = tmp_path / "db", tmp_path / "log.jsonl"
    damaged_copy(clean[0], db, "Chunk_0.*.bucket", "empty")
    hook = "\n".join([
        "from gabarito.errors import GabaritoError",
        "from gabarito.retrieval.arcadedb.index import ArcadeIndex",
        "def drop(self):",
        "    raise GabaritoError('ArcadeDB failed command DROP TYPE: HTTP 500 Cannot open database')",
        "ArcadeIndex.drop = drop"])
    done = evaluate(db, log, hook=hook)
    assert done.returncode == 2 and not records(log)
    (line,) = [x for x in done.stderr.splitlines() if "error" in x]
    folder = next(db.resolve().glob("databases/eval_*"))
    assert f"delete the folder {folder} and run again" in line


@integration
def test_a_question_over_the_clause_limit_is_searched_with_its_first_terms(tmp_path, clean):
    """Before: one question of more than 1,024 words failed the whole run ("HTTP 400 ... Invalid
    search query: palavra0 ..."), without naming it; the memory engine answered it."""
    evaluation = tmp_path / "long.json"
    long = "troca devolução " + " ".join(f"palavra{i}" for i in range(1100))
    evaluation.write_text(json.dumps([{"id": "longa", "query": long, "relevantIds": ["trocas-e-devolucoes"]},
                                      {"id": "curta", "query": "prazo de troca", "relevantIds": ["trocas-e-devolucoes"]}],
                                     ensure_ascii=False), encoding="utf-8")
    db, log = tmp_path / "db", tmp_path / "log.jsonl"
    shutil.copytree(clean[0], db, ignore=shutil.ignore_patterns("server.pid", "server.lock"))
    done = evaluate(db, log, evaluation=evaluation)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "more than the 1024 terms" in line]
    assert len(notes) == 1 and "'longa'" in notes[0] and "1102 words" in notes[0]
    (record,) = records(log)
    answers = {r["id"]: [x["id"] for x in r["returned"]] for r in record["per_query"]}
    assert answers["longa"] and answers["longa"][0].startswith("trocas-e-devolucoes")


@integration
def test_a_search_slower_than_its_timeout_stops_with_one_line_naming_the_question(tmp_path, clean):
    """Before: a slow search ran on with no bound (14 minutes on one 50 MB chunk)."""
    db, log = tmp_path / "db", tmp_path / "log.jsonl"
    shutil.copytree(clean[0], db, ignore=shutil.ignore_patterns("server.pid", "server.lock"))
    done = evaluate(db, log, env={"GABARITO_ARCADEDB_TIMEOUT": "0.0001"})  # no search answers that fast
    assert done.returncode == 2 and not records(log), done.stderr
    (line,) = [x for x in done.stderr.splitlines() if "error" in x]
    assert "question 'q001': ArcadeDB at " in line  # the first question, named
    assert "within 0.0001s" in line or "exceeded the TIMEOUT" in line
    assert "index reused" in done.stderr  # the build and its checks were not bound by it


def test_bad_timeout_setting_is_one_line(monkeypatch):
    from gabarito.evaluation.engines import search_timeout

    monkeypatch.setenv("GABARITO_ARCADEDB_TIMEOUT", "soon")
    with pytest.raises(GabaritoError, match="GABARITO_ARCADEDB_TIMEOUT"):
        search_timeout()


class _Trickle(http.server.BaseHTTPRequestHandler):
    """Answers every request slowly: headers at once, then one byte of the body at a time."""

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"result": []}' + b" " * 40
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for i in range(len(body)):
            try:
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.1)

    def log_message(self, *args):
        pass


def test_the_client_timeout_bounds_the_whole_answer_not_each_read():
    """requests' timeout bounds each read of the socket: a server sending a byte now and then
    kept the client waiting for ever. Now the whole answer must come within the timeout."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.handle_error = lambda _request, _address: None  # the client hangs up mid-answer: expected
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = ArcadeClient(f"http://127.0.0.1:{server.server_address[1]}", "root", "x", "db", timeout=0.5)
        with pytest.raises(GabaritoError, match=r"did not answer query .* within 0.5s"):
            client.query("SELECT 1")
        assert client.query("SELECT 1", timeout=60) == []  # the same answer, given the time, is read whole
    finally:
        server.shutdown()
        server.server_close()


@integration
def test_a_damaged_database_that_stops_the_server_is_named_with_the_folder_to_delete(tmp_path, clean):
    """Before: a garbled dictionary file stopped the embedded server from starting, and every run
    on that --db-dir ended with a 1,069-character Java stack trace naming nothing to delete."""
    import random

    db, log = tmp_path / "db", tmp_path / "log.jsonl"
    (dictionary,) = damaged_copy(clean[0], db, "dictionary.*.dict", "empty")
    dictionary.write_bytes(random.Random(20261204).randbytes(65536))
    done = evaluate(db, log)
    assert assert_rebuilt_or_stopped(done, log, clean[1]) == "stopped"
    (line,) = [x for x in done.stderr.splitlines() if "error" in x]
    assert f"delete the folder {dictionary.parent}" in line and len(line) < 700
    shutil.rmtree(dictionary.parent)  # what the line says to do: the next run rebuilds
    done = evaluate(db, log)
    assert assert_rebuilt_or_stopped(done, log, clean[1]) == "rebuilt"
