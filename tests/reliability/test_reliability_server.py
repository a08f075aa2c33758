"""Fault injection with real ArcadeDB servers and real ``gabarito evaluate`` processes: gabarito
killed (no server left behind), a dead owner's server (stopped by the next run), two runs at
once on one root dir and on one external server, the server killed during ingest and search,
a model setting changed with the same weights, and hostile query text on every engine.

Small corpora (the help-center documents) and few server starts: the machine has 2 cores.
Each test reproduces a defect of issue 15 and fails on the code before it (docs/reliability.md).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gabarito.cli import main
from gabarito.retrieval.arcadedb import ArcadeServer, ownership

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "data" / "helpcenter" / "docs"
EVALUATION = ROOT / "data" / "helpcenter" / "evaluation.json"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    if not DOCS.is_dir():
        pytest.skip("no help-center data")
    monkeypatch.setenv("GABARITO_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("GABARITO_ARCADEDB_URL", "GABARITO_ARCADEDB_PASSWORD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def external(tmp_path_factory):
    """One server for the tests that reach a server by URL (as a user's own server would be)."""
    with ArcadeServer(tmp_path_factory.mktemp("external"), heap="1g") as server:
        yield server


def command(log: Path, *extra: str, evaluation: Path = EVALUATION) -> list[str]:
    return [sys.executable, "-m", "gabarito.cli", "evaluate", "--documents", str(DOCS), "--evaluation",
            str(evaluation), "--log", str(log), *extra]


def env_for(server: ArcadeServer | None = None, **more: str) -> dict:
    env = {**os.environ, **more}
    if server is not None:
        env["GABARITO_ARCADEDB_PASSWORD"] = server.password
    return env


def servers_on(root: Path) -> list[int]:
    """PIDs of live ArcadeDB servers whose command line names ``root``."""
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
            and ownership.is_server_of(int(p.name), Path(root).resolve())]


def wait_for(predicate, timeout: float, step: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def returned(record: dict) -> dict:
    return {r["id"]: [(x["id"], round(x["score"], 5)) for x in r["returned"]] for r in record["per_query"]}


# -- gabarito killed: no server left behind ------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killing_gabarito_leaves_no_server_and_the_next_run_starts(tmp_path, sig):
    """Defect 2: `timeout 6 gabarito evaluate --engine arcadedb` left the JVM running (parent PID 1)
    and the next run refused to start."""
    db, log = tmp_path / "db", tmp_path / "runs" / "log.jsonl"
    run = subprocess.Popen(command(log, "--engine", "arcadedb", "--method", "bm25", "--db-dir", str(db)),
                           env=env_for(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: servers_on(db), 120), "the server never started"
        run.send_signal(sig)
        run.wait(60)
        assert wait_for(lambda: not servers_on(db), 45), f"server left running after {sig.name}: {servers_on(db)}"
    finally:
        run.kill()
        for pid in servers_on(db):
            os.kill(pid, signal.SIGKILL)
    if sig == signal.SIGTERM:
        assert run.returncode == 128 + signal.SIGTERM and "Traceback" not in run.stderr.read()
    again = subprocess.run(command(log, "--engine", "arcadedb", "--method", "bm25", "--db-dir", str(db)),
                           env=env_for(), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "still uses this root dir" not in again.stderr and not servers_on(db)


def test_a_server_left_by_a_dead_owner_is_stopped_by_the_next_run(tmp_path):
    """Defect 2: with its owner gone for good (SIGKILL, no parent-death signal), the next run
    stops the orphan with one notice instead of refusing to start."""
    root = tmp_path / "root"
    owner = subprocess.run([sys.executable, "-c", (
        "import os, signal\nfrom gabarito.retrieval.arcadedb import ArcadeServer\n"
        f"s = ArcadeServer({str(root)!r}, heap='512m', die_with_owner=False).start()\n"
        "print(s.process.pid, flush=True)\nos.kill(os.getpid(), signal.SIGKILL)")],
        capture_output=True, text=True, timeout=300)
    orphan = int(owner.stdout.split()[0])
    try:
        assert ownership.alive(orphan) and servers_on(root) == [orphan]
        notices = []
        with ArcadeServer(root, heap="512m", notice=notices.append) as server:
            assert server.process.pid != orphan and not ownership.alive(orphan)
            assert len(notices) == 1 and f"stopping the ArcadeDB server (pid {orphan})" in notices[0]
        assert not servers_on(root)
    finally:
        if ownership.alive(orphan):
            os.kill(orphan, signal.SIGKILL)


# -- two runs at once -------------------------------------------------------------------------------

def run_pair(argv_a: list[str], argv_b: list[str], env: dict) -> list[subprocess.CompletedProcess]:
    procs = [subprocess.Popen(a, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for a in (argv_a, argv_b)]
    outs = [p.communicate(timeout=900) for p in procs]
    return [subprocess.CompletedProcess(p.args, p.returncode, o, e) for p, (o, e) in zip(procs, outs)]


def test_two_runs_on_one_embedded_root_dir_both_complete(tmp_path):
    """Defect 3: the loser failed ("exited with code 1 while starting") or was pointed at the
    other run's live server as stale ("kill N")."""
    db, log = tmp_path / "db", tmp_path / "runs" / "log.jsonl"
    argv = command(log, "--engine", "arcadedb", "--method", "bm25", "--db-dir", str(db))
    a, b = run_pair(argv, argv, env_for())
    assert (a.returncode, b.returncode) == (0, 0), a.stderr + b.stderr
    both = a.stderr + b.stderr
    assert "is in use by " in both and "waiting" in both and "kill" not in both
    first, second = records(log)
    assert first["run_id"] != second["run_id"] and returned(first) == returned(second)
    assert not servers_on(db)


def test_two_runs_on_one_external_server_neither_clashes(tmp_path, external):
    """Defect 3: "HTTP 409 Database already exists" or "Type with name 'Chunk' was not found"
    (one run dropped the other's half-built index)."""
    log = tmp_path / "runs" / "log.jsonl"
    argv = command(log, "--engine", "arcadedb", "--method", "bm25", "--arcadedb-url", external.url)
    a, b = run_pair(argv, argv, env_for(external))
    assert (a.returncode, b.returncode) == (0, 0), a.stderr + b.stderr
    states = sorted(r["engine"]["index"] for r in records(log))
    assert states in (["built", "reused"], ["reused", "reused"])  # never two builds, never a failure
    first, second = records(log)
    assert first["engine"]["database"] == second["engine"]["database"] and returned(first) == returned(second)


# -- the server killed during ingest and during search ------------------------------------------

def test_server_killed_during_ingest_and_search_then_the_next_run_recovers(tmp_path, monkeypatch, capsys):
    """A kill -9 of the JVM gives a one-line error and writes nothing; the next run rebuilds a
    half-made index (or reuses a whole one) and finds what a clean run finds."""
    from gabarito.retrieval.arcadedb.index import ArcadeIndex

    db, log = tmp_path / "db", tmp_path / "runs" / "log.jsonl"
    argv = ["evaluate", "--documents", str(DOCS), "--evaluation", str(EVALUATION), "--log", str(log),
            "--engine", "arcadedb", "--method", "bm25", "--db-dir", str(db)]

    def kill_server():
        os.kill(int((db / "server.pid").read_text().split()[0]), signal.SIGKILL)
        time.sleep(0.5)

    real_ingest, real_bm25 = ArcadeIndex.ingest, ArcadeIndex.bm25

    def ingest_then_die(self, docs, vectors, batch_size=200, progress=True):
        real_ingest(self, docs[:10], vectors[:10], batch_size=5, progress=False)
        kill_server()
        return real_ingest(self, docs[10:], vectors[10:], batch_size=5, progress=False)

    calls = {"n": 0}

    def bm25_then_die(self, question, k):
        calls["n"] += 1
        if calls["n"] == 5:
            kill_server()
        return real_bm25(self, question, k)

    def written() -> tuple[int, list[str]]:
        runs = sorted(p.name for p in log.parent.iterdir()) if log.parent.exists() else []
        return (len(records(log)) if log.exists() else 0), runs

    for patch in (("ingest", ingest_then_die), ("bm25", bm25_then_die)):
        monkeypatch.setattr(ArcadeIndex, *patch)
        before = written()
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()  # progress lines, then the error in one line
        assert err[-1].startswith("gabarito: error: ") and "not reachable" in err[-1]
        assert sum("error" in line for line in err) == 1 and not any("Traceback" in line for line in err)
        assert written() == before and not servers_on(db)  # nothing written, no server left
        monkeypatch.setattr(ArcadeIndex, patch[0], real_ingest if patch[0] == "ingest" else real_bm25)
        assert main(argv) == 0
        assert ("index built" if patch[0] == "ingest" else "index reused") in capsys.readouterr().err
    clean, recovered = records(log)
    assert returned(clean) == returned(recovered)


# -- a model setting changed, the weights the same --------------------------------------------------

def minilm_copy(tmp_path: Path) -> Path:
    from gabarito.retrieval.models import resolve

    source = resolve(MINILM, engine="sentence-transformers")
    if source.origin == "hub":
        pytest.skip("no offline MiniLM here")
    target = tmp_path / "minilm"
    shutil.copytree(source.location, target)
    return target


def test_a_pooling_change_with_the_same_weights_is_a_cache_miss_and_a_new_index(tmp_path, external):
    """Defect 1: after 1_Pooling/config.json went from mean to cls, 75 cache hits, "index
    reused", MRR 0.605 against 0.679 from an empty cache, same run id."""
    model, log = minilm_copy(tmp_path), tmp_path / "runs" / "log.jsonl"
    env = env_for(external)
    dense = ["--model", str(model), "--engine", "arcadedb", "--arcadedb-url", external.url]
    assert subprocess.run(command(log, *dense), env=env, capture_output=True, timeout=900).returncode == 0
    (model / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 384, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}))
    changed = subprocess.run(command(log, *dense), env=env, capture_output=True, text=True, timeout=900)
    assert changed.returncode == 0, changed.stderr
    cold = subprocess.run(command(log, *dense), capture_output=True, text=True, timeout=900,
                          env={**env, "GABARITO_CACHE_DIR": str(tmp_path / "empty-cache")})
    assert cold.returncode == 0, cold.stderr
    mean, cls, fresh = records(log)
    assert mean["cache"]["misses"] == mean["n_chunks"]
    assert cls["cache"] == {"hits": 0, "misses": cls["n_chunks"]}  # the old cache served 75 hits here
    assert cls["engine"]["index"] == "built" and cls["engine"]["database"] != mean["engine"]["database"]
    assert returned(cls) != returned(mean)  # other vectors, other scores
    # what an empty cache computes is what the changed model got: the same vectors, so the same database
    assert fresh["cache"]["hits"] == 0 and fresh["engine"]["database"] == cls["engine"]["database"]
    assert returned(fresh) == returned(cls) and fresh["summary"]["mrr"] == cls["summary"]["mrr"]
    # the run record keeps the model's fingerprint, so `compare` names the change (was "changed: nothing")
    assert mean["model"]["fingerprint"] != cls["model"]["fingerprint"]
    assert mean["model"]["weights_sha256"] == cls["model"]["weights_sha256"]
    compared = subprocess.run([sys.executable, "-m", "gabarito.cli", "compare", mean["run_id"], cls["run_id"],
                               "--log", str(log)], env=env, capture_output=True, text=True, timeout=300)
    assert compared.returncode == 0, compared.stderr
    assert "changed: model_settings" in compared.stdout and "changed: nothing" not in compared.stdout
    assert "pooling_mode: 'mean' -> 'cls'" in compared.stdout, compared.stdout  # which setting


# -- hostile query text on every engine -------------------------------------------------------------

HOSTILE = ["'; DROP TYPE Chunk UNSAFE; --", 'title:senha AND (troca OR "frete grátis") NOT x~2 ^3 [a TO z] {b} *?',
           "SELECT * FROM Chunk WHERE 1 = 1", "\\ / : ! && || -+", "nul\u0000byte", "🙂 emoji e acentuação",
           "palavra " * 400, " : ", "__proto__ constructor", "%s %d {0} ${x}"]


def test_hostile_query_text_is_searched_as_text_on_every_engine(tmp_path, external):
    evaluation = tmp_path / "hostile.json"
    evaluation.write_text(json.dumps([{"id": f"h{i}", "query": q, "relevantIds": ["conta-e-seguranca"]}
                                      for i, q in enumerate(HOSTILE)], ensure_ascii=False), encoding="utf-8")
    log = tmp_path / "runs" / "log.jsonl"
    runs = [("--engine", "memory", "--method", "bm25"), ("--engine", "memory", "--method", "hybrid"),
            ("--engine", "arcadedb", "--method", "bm25", "--arcadedb-url", external.url),
            ("--engine", "arcadedb", "--method", "hybrid", "--arcadedb-url", external.url),
            ("--engine", "arcadedb", "--method", "bm25", "--arcadedb-url", external.url)]
    for extra in runs:
        done = subprocess.run(command(log, *extra, evaluation=evaluation), env=env_for(external),
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, (extra, done.stderr)
    logged = records(log)
    assert all(len(r["per_query"]) == len(HOSTILE) for r in logged)
    assert logged[-1]["engine"]["index"] == "reused"  # the "DROP TYPE" question dropped nothing
