"""Fault injection without a server: concurrent writers of the run log and the runs folder, a
damaged log line, file modes, a bad --log, duplicate questions and float ids, and who owns an
ArcadeDB root dir (with stand-in processes, so no Java is needed).

Each test reproduces a defect of issue 15 and fails on the code before it (see docs/reliability.md).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.evaluation.compare import load_runs
from gabarito.evaluation.runlog import check_log_path, read_log, unique_run_id, write_run
from gabarito.inputs.documents import load_evaluation
from gabarito.retrieval.arcadedb import ownership
from gabarito.study.records import append_jsonl

# a clean single-threaded server forks the workers: a fork of this process could inherit a lock
# held by another thread (torch, OpenMP) and wait on it forever
FORK = multiprocessing.get_context("forkserver")


# -- the run log ----------------------------------------------------------------------------------

def _append_many(args) -> None:
    path, writer, n = args
    for i in range(n):
        append_jsonl(path, {"writer": writer, "i": i, "pad": "x" * 2000})


def test_concurrent_appends_lose_no_line(tmp_path):
    """Defect 4: 3 processes appending 300 records through append_jsonl kept 103 lines."""
    log = tmp_path / "log.jsonl"
    with FORK.Pool(3) as pool:
        pool.map(_append_many, [(log, w, 100) for w in range(3)])
    lines = log.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 300
    records = [json.loads(line) for line in lines]
    assert sorted((r["writer"], r["i"]) for r in records) == [(w, i) for w in range(3) for i in range(100)]


def test_append_never_rewrites_the_log(tmp_path):
    log = tmp_path / "log.jsonl"
    append_jsonl(log, {"a": 1})
    inode = log.stat().st_ino
    append_jsonl(log, {"a": 2})
    assert log.stat().st_ino == inode  # the same file, appended to (a rewrite + rename changes the inode)


def record(run_id: str, value: float = 1.0) -> dict:
    return {"run_id": run_id, "config": {"k": 10}, "evaluation_sha256": "e", "per_query": [
        {"id": "q1", "query": "x", "type": "", "severity": "", "answerable": True, "expected": ["d1"],
         "returned": [{"id": "d1", "score": value}], "hit@1": True, "hit@3": True, "hit@5": True, "rr": 1.0,
         "false_positive": "", "top_score": value, "top_segment": "d1"}]}


def test_a_damaged_log_line_is_skipped_and_reported(tmp_path):
    """Defect 6: one cut-short line made `gabarito compare RUN_ID` fail for every run of the log."""
    log = tmp_path / "log.jsonl"
    append_jsonl(log, record("run-a"))
    with open(log, "ab") as fh:  # a process killed in the middle of its append
        fh.write(json.dumps(record("run-b")).encode()[:50])
    append_jsonl(log, record("run-c"))
    warnings = []
    runs = load_runs(["run-a", "run-c"], log, warn=warnings.append)
    assert [r["run_id"] for r in runs] == ["run-a", "run-c"]
    assert len(warnings) == 1 and "line 2 is damaged" in warnings[0] and "\n" not in warnings[0]
    damaged = []
    assert [n for n, _ in read_log(log, lambda n, why: damaged.append(n))] == [1, 3] and damaged == [2]
    with pytest.raises(GabaritoError, match="no run 'run-b'"):
        load_runs(["run-b"], log, warn=lambda _t: None)


def _one_run(args) -> str:
    runs, barrier = args
    barrier.wait()
    rec = record("20260101-000000-abcdef12")
    run_id = unique_run_id(rec, runs / "log.jsonl", runs)
    write_run(rec, runs / run_id, runs / "log.jsonl")
    return run_id


def test_parallel_runs_get_distinct_ids_and_all_are_kept(tmp_path):
    """Defect 4: 12 parallel runs writing one runs/ lost 2 to the run-id race ("Directory not empty")."""
    runs = tmp_path / "runs"
    barrier = FORK.Manager().Barrier(8)
    with FORK.Pool(8) as pool:
        ids = pool.map(_one_run, [(runs, barrier)] * 8)
    assert len(set(ids)) == 8
    assert sorted(r["run_id"] for _n, r in read_log(runs / "log.jsonl")) == sorted(ids)
    assert all((runs / i / "run.json").is_file() and (runs / i / "results.csv").is_file() for i in ids)
    assert sorted(p.name for p in runs.iterdir()) == sorted([*ids, "log.jsonl"])  # no temp folder left


def test_a_reserved_id_is_released_when_the_run_goes_elsewhere(tmp_path):
    runs = tmp_path / "runs"
    rec = record("r1")
    unique_run_id(rec, runs / "log.jsonl", runs)
    write_run(rec, tmp_path / "elsewhere", runs / "log.jsonl")
    assert sorted(p.name for p in runs.iterdir()) == ["log.jsonl"]


def test_run_folders_and_the_log_follow_the_umask(tmp_path):
    """Defect 7: each run made log.jsonl 0600 and run folders 0700 regardless of the umask."""
    old = os.umask(0o022)
    try:
        rec = record("r1")
        runs = tmp_path / "runs"
        run_id = unique_run_id(rec, runs / "log.jsonl", runs)
        paths = write_run(rec, runs / run_id, runs / "log.jsonl")
    finally:
        os.umask(old)
    assert stat.S_IMODE((runs / run_id).stat().st_mode) == 0o755
    assert stat.S_IMODE(paths["log"].stat().st_mode) == 0o644
    assert stat.S_IMODE(paths["json"].stat().st_mode) == 0o644


@pytest.mark.parametrize("where", ["folder", "under a file"])
def test_a_bad_log_path_is_refused_before_any_work(tmp_path, where):
    """Defect 6: --log naming a folder failed with IsADirectoryError after the whole evaluation."""
    (tmp_path / "afile").write_text("x")
    path = tmp_path if where == "folder" else tmp_path / "afile" / "log.jsonl"
    with pytest.raises(GabaritoError) as err:
        check_log_path(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)
    assert check_log_path(tmp_path / "new" / "log.jsonl") == tmp_path / "new" / "log.jsonl"


def test_an_unknown_model_id_is_one_line_at_once(tmp_path, monkeypatch):
    """Defect 6: an unknown model id gave a raw traceback (exit 1) after 75 s."""
    from gabarito.retrieval.models import check_model_id

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.monotonic()
    with pytest.raises(GabaritoError) as err:
        check_model_id("nobody/no-such-model-here")
    assert time.monotonic() - started < 10 and "\n" not in str(err.value)
    assert "'nobody/no-such-model-here'" in str(err.value)
    assert "no offline copy" in str(err.value) or "unknown model" in str(err.value)  # with or without a network
    assert check_model_id(str(tmp_path)).origin == "local folder"


# -- evaluation files -----------------------------------------------------------------------------

def write_eval(tmp_path: Path, records: list) -> Path:
    path = tmp_path / "evaluation.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_the_same_question_with_other_answers_is_reported(tmp_path):
    """Defect 7: the same query text twice with different relevantIds was accepted silently."""
    path = write_eval(tmp_path, [{"id": "a", "query": "Prazo de troca?", "relevantIds": ["d1"]},
                                 {"id": "b", "query": "prazo de  troca?", "relevantIds": ["d2"]}])
    with pytest.raises(GabaritoError) as err:
        load_evaluation(path)
    text = str(err.value)
    assert "same question as record 1 (a)" in text and "record 2 (b)" in text and "other relevantIds" in text
    same = write_eval(tmp_path, [{"query": "x?", "relevantIds": ["d1"]}, {"query": "x?", "relevantIds": ["d1"]}])
    with pytest.raises(GabaritoError, match="counted twice"):
        load_evaluation(same)


def test_a_float_id_is_named_not_reported_missing(tmp_path):
    """Defect 7: a float id was reported as "missing"."""
    path = write_eval(tmp_path, [{"id": 1.5, "query": "x?", "relevantIds": ["d1"]}])
    with pytest.raises(GabaritoError, match=r"'id' is the float 1.5, not an id"):
        load_evaluation(path)
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text(json.dumps({"_id": 2.0, "text": "x?"}) + "\n")
    (beir / "qrels" / "test.tsv").write_text("2\td1\t1\n")
    with pytest.raises(GabaritoError, match=r"'_id' is the float 2.0"):
        load_evaluation(beir)


# -- who owns a root dir (stand-in processes for the Java server) ---------------------------------

def fake_server(root: Path) -> subprocess.Popen:
    """A process whose command line looks like our ArcadeDB server's on ``root``."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "com.arcadedb.server.ArcadeDBServer",
                             f"-Darcadedb.server.rootPath={root}"], start_new_session=True)


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_server_whose_owner_died_is_stopped_with_one_notice(tmp_path):
    """Defect 2: the next run refused to start ("a server from an earlier run still uses this root dir")."""
    server = fake_server(tmp_path)
    try:
        (tmp_path / "server.pid").write_text(f"{server.pid}\n")
        (tmp_path / ownership.OWNER_FILE).write_text(json.dumps({"owner_pid": dead_pid(), "server_pid": server.pid}))
        notices = []
        ownership.reap_orphan(tmp_path, tmp_path / "server.pid", notices.append, busy_timeout=5)
        assert server.wait(30) is not None
        assert len(notices) == 1 and f"stopping the ArcadeDB server (pid {server.pid})" in notices[0]
        assert not (tmp_path / "server.pid").exists() and not (tmp_path / ownership.OWNER_FILE).exists()
    finally:
        server.kill()


def _hold_root(root: str, ready, release) -> None:
    lock = ownership.RootLock(Path(root))
    lock.acquire(None, lambda _t: None)
    (Path(root) / ownership.OWNER_FILE).write_text(json.dumps({"owner_pid": os.getpid(), "server_pid": 4242}))
    ready.set()
    release.wait(60)
    lock.release()


def test_a_live_owner_is_waited_for_never_named_stale(tmp_path):
    """Defect 3: a second run named the *other run's live* server stale ("kill N")."""
    ready, release = FORK.Event(), FORK.Event()
    holder = FORK.Process(target=_hold_root, args=(str(tmp_path), ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        notices = []
        lock = ownership.RootLock(tmp_path)
        with pytest.raises(GabaritoError, match=f"still in use by process {holder.pid}"):
            lock.acquire(1.0, notices.append)
        assert len(notices) == 1 and f"in use by process {holder.pid}" in notices[0] and "waiting" in notices[0]
        assert "stale" not in notices[0] and "kill" not in notices[0]
        release.set()
        started = time.monotonic()
        lock.acquire(30.0, notices.append)  # waits for the owner to finish, then has the root dir
        assert time.monotonic() - started < 30
        lock.release()
    finally:
        release.set()
        holder.join(30)


def test_an_unrecorded_server_of_a_live_python_is_not_stopped(tmp_path):
    """A server started by a gabarito that recorded no owner: its live parent owns it."""
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', "
        f"'com.arcadedb.server.ArcadeDBServer', '{tmp_path}']); print(p.pid, flush=True); time.sleep(120)")],
        stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        deadline = time.monotonic() + 30  # the child names the server class once it has exec'd
        while not ownership.is_server_of(child, tmp_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        (tmp_path / "server.pid").write_text(f"{child}\n")
        notices = []
        with pytest.raises(GabaritoError, match=f"still in use by process {parent.pid}"):
            ownership.reap_orphan(tmp_path, tmp_path / "server.pid", notices.append, busy_timeout=1.0)
        assert ownership.alive(child) and "waiting" in notices[0]
    finally:
        parent.kill()
        os.kill(child, 9)


# -- the site's folder swap under contention --------------------------------------------------------

def _swap_many(args) -> list[str]:
    from gabarito.publish.site import swap_in

    base, writer, n = args
    errors = []
    for i in range(n):
        new = base / f"build-{writer}-{i}"
        new.mkdir()
        for name in ("index.html", "a.html", "b.html"):
            (new / name).write_text(f"{writer}-{i}")
        try:
            swap_in(new, base / "site")
        except Exception as exc:  # noqa: BLE001 - counted: none may fail
            errors.append(f"{type(exc).__name__}: {exc}")
    return errors


def test_concurrent_swaps_never_fail_and_leave_one_whole_site(tmp_path):
    """Issue 22: 6 processes swapping 30 sites each into one folder: the two renames of one
    swap raced another's ("Directory not empty", 5 to 20 of 180 failed with a raw OSError)
    and left .site.new-*/.site.old-* folders behind."""
    with FORK.Pool(6) as pool:
        errors = [e for batch in pool.map(_swap_many, [(tmp_path, w, 30) for w in range(6)]) for e in batch]
    assert errors == []
    contents = {(tmp_path / "site" / name).read_text() for name in ("index.html", "a.html", "b.html")}
    assert len(contents) == 1  # the three pages of one build: never a mix
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("build-")) == ["site"]


def test_a_deeply_nested_log_line_is_skipped_like_a_cut_short_one(tmp_path):
    """Issue 22: a log line of 100,000 `[` raised RecursionError in every reader of the log."""
    log = tmp_path / "log.jsonl"
    append_jsonl(log, record("run-a"))
    with open(log, "a", encoding="utf-8") as fh:
        fh.write("[" * 100_000 + "\n")
    append_jsonl(log, record("run-c"))
    damaged = []
    assert [n for n, _ in read_log(log, lambda n, why: damaged.append((n, why)))] == [1, 3]
    assert damaged == [(2, "JSON nested too deeply to read")]
