"""The cases of docs/reliability.md driven through the ``gabarito`` command itself: each test
starts ``python -m gabarito.cli`` as a user would and checks its exit status, its one line on
stderr and what it left on disk.

No network: every command runs with ``HF_HUB_OFFLINE=1`` and the BM25 memory engine (no model
is loaded) unless the case is about the model. The Ctrl-C and concurrent-build cases build a
small site and start Jupyter kernels: they are integration tests.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PY = sys.executable
DEEP = "[" * 100_000

DOCS = {
    "refunds": "# Refunds\n\nYou can ask for a refund within thirty days of delivery.\n",
    "shipping": "# Shipping\n\nShipping is free above fifty dollars; track the parcel by email.\n",
    "account": "# Account\n\nReset your password from the login page.\n",
}
QUESTIONS = [
    {"id": "q1", "query": "refund within thirty days", "relevantIds": ["refunds"]},
    {"id": "q2", "query": "track the parcel", "relevantIds": ["shipping"]},
    {"id": "q3", "query": "reset password", "relevantIds": ["account"]},
]


# -- helpers ----------------------------------------------------------------------------------------

def gabarito(*args: str, cwd: Path, timeout: float = 300, **popen) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GABARITO_CACHE_DIR": str(cwd / "cache")}
    env.pop("GABARITO_ARCADEDB_URL", None)
    return subprocess.run([PY, "-m", "gabarito.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, **popen)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2, stderr exactly one ``gabarito: error:`` line holding every needle, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gabarito: error: "), proc.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.fixture()
def project(tmp_path) -> Path:
    """A folder holding ``docs/`` (three Markdown files) and ``evaluation.json``."""
    (tmp_path / "docs").mkdir()
    for name, text in DOCS.items():
        (tmp_path / "docs" / f"{name}.md").write_text(text, encoding="utf-8")
    (tmp_path / "evaluation.json").write_text(json.dumps(QUESTIONS), encoding="utf-8")
    return tmp_path


def evaluate(project: Path, *extra: str, log: str = "runs/log.jsonl", documents: str = "docs",
             evaluation: str = "evaluation.json", **popen) -> subprocess.CompletedProcess:
    return gabarito("evaluate", "--documents", documents, "--evaluation", evaluation, "--log", log,
                    "--method", "bm25", *extra, cwd=project, **popen)


def run_ids(log: Path) -> list[str]:
    """The run ids of the log's sound lines."""
    ids = []
    for line in log.read_text(encoding="utf-8").splitlines():
        try:
            ids.append(json.loads(line)["run_id"])
        except (ValueError, RecursionError):
            continue
    return ids


# -- 19: an unknown model, 18: a --log that cannot be written; both before any work -------------------

@pytest.mark.parametrize("option", [["--method", "dense", "--model", "nobody/no-such-model"],
                                    ["--reranker", "nobody/no-such-model"],
                                    ["--reranker", "bi:nobody/no-such-model"],
                                    ["--reranker", "maxsim:nobody/no-such-model"]],
                         ids=["model", "cross-encoder", "bi", "maxsim"])
def test_cli_an_unknown_model_is_one_line_before_any_work(project, option):
    """Before: 114 s of download retries, then a 124-line traceback, exit 1 (83 lines offline);
    an unknown --reranker took 75 s before its line, after the whole first stage."""
    proc = evaluate(project, *option)
    assert_one_line_error(proc, "'nobody/no-such-model'")
    assert "no offline copy" in proc.stderr or "unknown model" in proc.stderr
    assert not (project / "runs").exists()  # nothing written: refused before any work


@pytest.mark.parametrize("where", ["folder", "under a file"])
def test_cli_a_bad_log_path_is_refused_before_any_work(project, where):
    """Before: `--log <a folder>` failed with IsADirectoryError after the whole run."""
    (project / "afile").write_text("x")
    log = "docs" if where == "folder" else "afile/log.jsonl"
    # the documents do not even exist: the log is refused before they are read
    proc = evaluate(project, log=log, documents="missing-docs")
    line = assert_one_line_error(proc, f"error: {log}: ")
    assert ("is a folder" if where == "folder" else "afile is a file, not a folder") in line
    assert not (project / "runs").exists()


# -- 8 (issue 22): disk full on --log -------------------------------------------------------------

def test_cli_a_log_that_cannot_grow_names_the_log_and_keeps_no_partial_record(project):
    """Before: a cut-short record stayed in the log and the error named the run folder.

    The disk is "full" for this process only: RLIMIT_FSIZE caps any file it writes a few
    hundred bytes above the log's present size (SIGXFSZ ignored, so the write fails with
    EFBIG part way through the record, as it would with ENOSPC on a full disk)."""
    log = project / "runs" / "log.jsonl"
    log.parent.mkdir()
    log.write_text("".join(json.dumps({"run_id": f"old-{i}", "pad": "x" * 1000}) + "\n" for i in range(200)))
    before = log.read_bytes()
    limit = len(before) + 300

    def full_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    proc = evaluate(project, preexec_fn=full_disk)
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("gabarito: error: runs/log.jsonl: cannot append the run to the log"), line
    assert "Traceback" not in proc.stderr
    assert log.read_bytes() == before  # no cut-short record left behind
    assert sorted(p.name for p in log.parent.iterdir()) == ["log.jsonl"]  # and no run folder


# -- 5 (issue 22): JSON nested 100,000 deep ---------------------------------------------------------

def test_cli_a_deeply_nested_evaluation_or_document_is_one_line(project):
    """Before: a RecursionError traceback, exit 1."""
    (project / "deep.json").write_text(DEEP)
    assert_one_line_error(evaluate(project, evaluation="deep.json"), "deep.json", "nested too deeply")
    (project / "deepdocs.json").write_text('[{"id": "a", "text": ' + DEEP + "}]")
    assert_one_line_error(evaluate(project, documents="deepdocs.json"), "deepdocs.json", "nested too deeply")
    (project / "beir").mkdir()
    (project / "beir" / "corpus.jsonl").write_text('{"_id": "refunds", "text": "x"}\n{"_id": "b", "text": '
                                                   + DEEP + "}\n")
    assert_one_line_error(evaluate(project, documents="beir"), "beir/corpus.jsonl", "line 2", "nested too deeply")
    (project / "run.json").write_text(DEEP)
    assert_one_line_error(gabarito("compare", "run.json", "run.json", cwd=project), "run.json", "nested too deeply")


@pytest.mark.parametrize("damage", ["cut short", "nested 100,000 deep"])
def test_cli_a_damaged_log_line_is_skipped_with_one_warning(project, damage):
    """Case 9 through `gabarito compare`, and issue 22's deep line: before, one such line made
    every later `evaluate` and `compare` on that log fail (the deep one with a RecursionError)."""
    log = project / "runs" / "log.jsonl"
    assert evaluate(project, "--label", "a").returncode == 0
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(log.read_text(encoding="utf-8")[:80] if damage == "cut short" else DEEP)  # no newline
    second = evaluate(project, "--label", "b", "--k", "5")
    assert second.returncode == 0 and "Traceback" not in second.stderr, second.stderr[-2000:]
    a, b = run_ids(log)
    proc = gabarito("compare", a, b, "--log", "runs/log.jsonl", "--measure", "RR@5", cwd=project)
    assert proc.returncode == 0, proc.stderr[-2000:]
    warnings = [ln for ln in proc.stderr.splitlines() if "is damaged" in ln]
    assert len(warnings) == 1 and "line 2 is damaged" in warnings[0] and "skipped" in warnings[0]
    assert "Traceback" not in proc.stderr and a in proc.stdout and b in proc.stdout


# -- 7, 8: several processes on one log and one runs/ --------------------------------------------

def test_cli_parallel_evaluations_on_one_log_keep_every_run(project):
    """Cases 7 and 8 with real processes: 4 runs of one config started together on one log."""
    with ThreadPoolExecutor(4) as pool:
        procs = list(pool.map(lambda _i: evaluate(project), range(4)))
    assert [p.returncode for p in procs] == [0] * 4, [p.stderr[-500:] for p in procs]
    ids = run_ids(project / "runs" / "log.jsonl")
    assert len(ids) == 4 and len(set(ids)) == 4
    assert all((project / "runs" / i / "run.json").is_file() for i in ids)
    assert sorted(p.name for p in (project / "runs").iterdir()) == sorted([*ids, "log.jsonl"])


# -- 15, 16 and issue 22's corpus.jsonl float id ---------------------------------------------------

def test_cli_the_same_question_twice_is_refused(project):
    """Case 15: the same question with other relevantIds was accepted silently."""
    twice = [*QUESTIONS, {"id": "q4", "query": "Refund  within thirty days", "relevantIds": ["account"]}]
    (project / "twice.json").write_text(json.dumps(twice))
    assert_one_line_error(evaluate(project, evaluation="twice.json"), "twice.json", "record 4 (q4)",
                          "same question as record 1 (q1)", "other relevantIds")


def test_cli_a_float_id_is_named_in_every_input(project):
    """Case 16 in an evaluation file; issue 22: a BEIR corpus.jsonl `"_id": 2.0` was still
    "missing or empty"."""
    (project / "float.json").write_text(json.dumps([{**QUESTIONS[0], "id": 1.5}]))
    assert_one_line_error(evaluate(project, evaluation="float.json"), "float.json", "'id' is the float 1.5, not an id")
    (project / "beir").mkdir()
    (project / "beir" / "corpus.jsonl").write_text('{"_id": "refunds", "text": "x"}\n{"_id": 2.0, "text": "y"}\n')
    assert_one_line_error(evaluate(project, documents="beir"), "beir/corpus.jsonl", "record 2",
                          "'_id' is the float 2.0, not an id")


# -- 17: file modes follow the umask -----------------------------------------------------------------

def test_cli_run_files_follow_the_umask(project):
    """Case 17: log.jsonl was 0600 and run folders 0700 whatever the umask."""
    proc = evaluate(project, preexec_fn=lambda: os.umask(0o022))
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = project / "runs"
    (run_id,) = run_ids(runs / "log.jsonl")
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(runs / run_id) == 0o755 and mode(runs / "log.jsonl") == 0o644
    assert mode(runs / run_id / "run.json") == 0o644 and mode(runs / run_id / "results.csv") == 0o644


# -- 8 (issue 22): symbolic links in the documents folder ---------------------------------------------

def test_cli_symlinks_out_of_the_documents_folder_are_left_out_and_named(project, tmp_path_factory):
    """Before: a file link (leak.md -> /etc/passwd) was indexed silently, a linked folder
    skipped silently. Now a link is followed only when it points inside the folder."""
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.md").write_text("# Secret\n\nrefund within thirty days, secret copy\n")
    docs = project / "docs"
    (docs / "leak.md").symlink_to(outside / "secret.md")
    (docs / "elsewhere").symlink_to(outside, target_is_directory=True)
    (docs / "alias.md").symlink_to("refunds.md")  # inside: followed
    (docs / "sub").mkdir()
    (docs / "sub" / "loop").symlink_to("..", target_is_directory=True)  # inside, walked once
    proc = evaluate(project)
    assert proc.returncode == 0, proc.stderr[-2000:]
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("gabarito: warning:")]
    assert len(warnings) == 1, proc.stderr
    assert "2 symbolic link(s) point outside the documents folder" in warnings[0]
    assert f"leak.md -> {outside / 'secret.md'}" in warnings[0] and f"elsewhere -> {outside}" in warnings[0]
    record = json.loads(next((project / "runs").glob("*/run.json")).read_text())
    assert record["n_documents"] == 4  # account, alias, refunds, shipping
    returned = {r["id"] for q in record["per_query"] for r in q["returned"]}
    assert "leak" not in returned and not any(i.startswith("elsewhere/") for i in returned)
    assert "alias" in returned
    # a leaked id cannot be asked for either: it is not in the documents
    (project / "leak.json").write_text(json.dumps([{"query": "secret copy", "relevantIds": ["leak"]}]))
    refused = evaluate(project, evaluation="leak.json")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines()[1:] == [
        "gabarito: error: leak.json: record 1 (q001): relevant id 'leak' is not in the documents"]


# -- Ctrl-C in the front door of the study scripts ----------------------------------------------------

STUDY = """
import time
from gabarito.errors import run_main

def main(argv):
    print("started", flush=True)
    time.sleep(120)
    return 0

run_main(main)
"""


def _started(proc: subprocess.Popen) -> None:
    assert proc.stdout.readline().strip() == "started"


def test_a_study_script_interrupted_is_one_line_and_130(tmp_path):
    """`run_main` (every study script, and `gabarito report` through them) said nothing about
    Ctrl-C: a KeyboardInterrupt traceback."""
    script = tmp_path / "study.py"
    script.write_text(STUDY)
    proc = subprocess.Popen([PY, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _started(proc)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip() == "interrupted", err


def test_gabarito_stops_when_a_study_it_runs_is_interrupted(tmp_path, capsys):
    """A study interrupted under `gabarito report`/`study` stops gabarito too, exit 130 and the
    study's one line, not "study X exited with status 130" (exit 2) or the next study."""
    from types import SimpleNamespace

    from gabarito.cli import run_study

    script = tmp_path / "study.py"
    script.write_text("from gabarito.errors import run_main\n\ndef main(argv):\n    raise KeyboardInterrupt\n\n"
                      "run_main(main)\n")
    with pytest.raises(SystemExit) as stop:
        run_study(SimpleNamespace(name="demo", dir=tmp_path, script="study.py"), [])
    assert stop.value.code == 130 and capsys.readouterr().err == "interrupted\n"


# -- Ctrl-C while the site runs its notebooks; concurrent site builds ------------------------------------

def site_project(root: Path, *, sleep: bool) -> Path:
    """A small site project (tests/publish/test_site.py's fixture); with ``sleep`` its notebook
    ends with a cell that writes ``root/started`` and sleeps two minutes."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "publish"))
    from test_site import FIXTURE_NOTEBOOK, make_fixture

    from gabarito.study.records import write_results

    cells = list(FIXTURE_NOTEBOOK)
    if sleep:
        cells.append(("code", f"import pathlib, time\npathlib.Path({str(root / 'started')!r}).write_text('x')\n"
                              f"time.sleep(120)"))
    make_fixture(root, notebook=cells)
    results = root / "case-studies" / "demo" / "results.json"
    write_results(results, json.loads(results.read_text(encoding="utf-8")))  # recorded as its run wrote it
    return root


def kernels_in(folder: Path) -> list[int]:
    """Processes whose working directory is ``folder`` (a notebook's kernel runs there)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(os.readlink(f"/proc/{pid}/cwd")) == folder.resolve():
                found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.integration
@pytest.mark.parametrize("target", ["process group", "process alone"])
def test_cli_ctrl_c_while_the_site_runs_a_notebook_is_one_line_and_130(tmp_path, target):
    """Before: Ctrl-C gave a 52-line asyncio.CancelledError traceback (exit 1), SIGINT to the
    process alone "DeadKernelError: Kernel died" (exit 2)."""
    root = site_project(tmp_path / "project", sleep=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([PY, "-m", "gabarito.cli", "site", "--root", str(root), "--out", str(tmp_path / "site"),
                             "--renderer", "smalldocs"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not (root / "started").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the notebook never started"
            time.sleep(0.2)
        if target == "process group":  # what a terminal's Ctrl-C does
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "gabarito: interrupted", err[-3000:]
    assert [ln for ln in err.splitlines() if not ln.startswith("site: ")] == ["gabarito: interrupted"]
    assert not (tmp_path / "site").exists()
    for _ in range(50):  # the kernel is gone
        if not kernels_in(root / "notebooks"):
            break
        time.sleep(0.2)
    assert kernels_in(root / "notebooks") == []


@pytest.mark.integration
def test_cli_concurrent_site_builds_into_one_folder_all_succeed(tmp_path):
    """Issue 22: the site's folder swap failed with a raw OSError under contention (5 of 180)."""
    root = site_project(tmp_path / "project", sleep=False)
    out = tmp_path / "site"

    def build(_i):
        return [gabarito("site", "--root", str(root), "--out", str(out), "--renderer", "smalldocs", "--no-execute",
                         cwd=tmp_path) for _ in range(3)]

    with ThreadPoolExecutor(4) as pool:
        procs = [p for batch in pool.map(build, range(4)) for p in batch]
    assert [p.returncode for p in procs] == [0] * len(procs), [p.stderr[-500:] for p in procs if p.returncode]
    assert (out / "index.html").is_file() and (out / "notebooks" / "benchmark_rrf.html").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []  # no half-swapped folder
