"""The cases of docs/reliability.md driven through the ``gabarito`` command itself: each test
starts ``python -m gabarito.cli`` as a user would and checks its exit status, its one line on
stderr and what it left on disk.

No network: every command runs with ``HF_HUB_OFFLINE=1`` and the BM25 memory engine (no model
is loaded) unless the case is about the model; the vector-cache cases load the packaged MiniLM
(integration tests). Ctrl-C and the site: ``test_reliability_cli_site.py``.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gabarito.study.integrity import record

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


@pytest.mark.parametrize("option", [["--method", "dense", "--model", "/no/such/folder"],
                                    ["--reranker", "maxsim:/no/such/folder"],
                                    ["--reranker", "trained:cranfield"],
                                    ["--method", "dense", "--model", "not a model id"]],
                         ids=["missing folder", "maxsim folder", "trained", "invalid id"])
def test_cli_a_model_that_is_no_folder_and_no_id_is_one_line(project, option):
    """Before (the round's own attack): a missing folder or ``trained:NAME`` gave an
    ``HFValidationError`` traceback, exit 1."""
    proc = evaluate(project, *option)
    assert_one_line_error(proc, repr(option[-1].partition("maxsim:")[2] or option[-1]))
    assert not (project / "runs").exists()


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
    record(project / "run.json", when="2026-12-07T00:00:00+00:00")  # as evaluate would: compare trusts no unrecorded run
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
    told = [ln for ln in second.stderr.splitlines() if "is damaged" in ln]  # evaluate says so too
    assert len(told) == 1 and told[0].startswith("gabarito: warning: log runs/log.jsonl line 2 is damaged (")
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
    (docs / "logo.png").symlink_to("/etc/hostname")  # outside, but never read: not worth a word
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


# -- 21: the memory engine's BM25 splits words as Lucene does ------------------------------------------

def test_cli_memory_bm25_keeps_a_colon_word_whole(project):
    """Case 21: the memory engine split `foo:bar` where Lucene's StandardAnalyzer keeps one token."""
    (project / "docs" / "colon.md").write_text("# Colon\n\nsee foo:bar here\n")
    (project / "docs" / "plain.md").write_text("# Plain\n\nfoo and bar apart\n")
    (project / "colon.json").write_text(json.dumps([{"id": "q1", "query": "foo", "relevantIds": ["plain"]}]))
    proc = evaluate(project, evaluation="colon.json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    (record,) = [json.loads(p.read_text()) for p in (project / "runs").glob("*/run.json")]
    assert [r["id"] for r in record["per_query"][0]["returned"]] == ["plain"]  # `foo:bar` is not `foo`


# -- 10, 11: the vector cache under the command, with the packaged MiniLM (no network) --------------------

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def dense(project: Path, cache: Path) -> subprocess.Popen:
    """A dense run on the memory engine (torch: no ONNX export to wait for), started."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GABARITO_CACHE_DIR": str(cache), "GABARITO_ENCODER_BACKEND": "torch"}
    return subprocess.Popen([PY, "-m", "gabarito.cli", "evaluate", "--documents", "docs", "--evaluation",
                             "evaluation.json", "--log", "runs/log.jsonl", "--model", MINILM], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def offline_minilm() -> None:
    from gabarito.retrieval.models import resolve

    if resolve(MINILM, engine="sentence-transformers").origin == "hub":
        pytest.skip("no offline MiniLM here")


def finished(proc: subprocess.Popen) -> str:
    """The run's stderr, once it ended well."""
    _out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0 and "Traceback" not in err, err[-2000:]
    return err


def logged(project: Path) -> list[dict]:
    return [json.loads(line) for line in (project / "runs" / "log.jsonl").read_text().splitlines()]


def returned(record: dict) -> list:
    return [[(r["id"], round(r["score"], 5)) for r in q["returned"]] for q in record["per_query"]]


@pytest.mark.integration
def test_cli_a_damaged_cache_pack_is_a_notice_and_recomputed(project):
    """Case 10: a damaged cache file gave a raw traceback on every run until deleted by hand."""
    offline_minilm()
    cache = project / "cache"
    finished(dense(project, cache))
    (pack,) = cache.rglob("*.npz")
    pack.write_bytes(pack.read_bytes()[: pack.stat().st_size // 2])  # cut short
    err = finished(dense(project, cache))
    notices = [ln for ln in err.splitlines() if "discarded damaged" in ln]
    assert len(notices) == 1 and str(pack.name) in notices[0]
    finished(dense(project, cache))
    first, healed, again = logged(project)
    assert healed["cache"] == {"hits": 0, "misses": first["n_chunks"]}
    assert again["cache"] == {"hits": first["n_chunks"], "misses": 0}  # healed
    assert returned(first) == returned(healed) == returned(again)


@pytest.mark.integration
def test_cli_two_runs_filling_one_cache_at_once_lose_and_mix_nothing(project):
    """Case 11: two writers interleaving; a later run got the other writer's vectors."""
    offline_minilm()
    cache = project / "cache"
    both = [dense(project, cache), dense(project, cache)]
    for proc in both:
        finished(proc)
    finished(dense(project, cache))
    one, two, later = logged(project)
    assert later["cache"] == {"hits": later["n_chunks"], "misses": 0}
    assert returned(one) == returned(two) == returned(later)


# -- how a second reading meets the first stage: --rerank-fuse -------------------------------------

@pytest.mark.parametrize("option", [["--rerank-fuse", "mean", "--reranker", "splade"],
                                    ["--rerank-fuse", "convex:1.5", "--reranker", "splade"],
                                    ["--rerank-fuse", "convex", "--reranker", "splade"],
                                    ["--rerank-fuse", "rrf"]],
                         ids=["unknown", "weight above 1", "no weight", "no reader"])
def test_cli_a_bad_rerank_fusion_is_one_line_before_any_work(project, option):
    proc = evaluate(project, *option)
    assert_one_line_error(proc, "rerank" if option[1] == "rrf" else repr(option[1]).strip("'"))
    assert not (project / "runs").exists()


def test_cli_the_reader_fused_by_rrf_is_recorded_and_named_by_compare(project):
    """The same reader, its order replacing BM25's and fused with it by RRF: both runs finish,
    record how they fused, get different run ids, and compare names the setting that differs."""
    replaced = evaluate(project, "--reranker", "splade", "--rerank-n", "3", "--out", "runs/replace")
    fused = evaluate(project, "--reranker", "splade", "--rerank-n", "3", "--rerank-fuse", "rrf", "--out", "runs/rrf")
    assert replaced.returncode == 0 and fused.returncode == 0, (replaced.stderr[-800:], fused.stderr[-800:])
    records = [json.loads((project / "runs" / name / "run.json").read_text(encoding="utf-8"))
               for name in ("replace", "rrf")]
    assert [r["config"]["rerank_fuse"] for r in records] == ["replace", "rrf"]
    assert records[0]["run_id"] != records[1]["run_id"]
    compared = gabarito("compare", "runs/replace", "runs/rrf", cwd=project)
    assert compared.returncode == 0 and "rerank_fuse" in compared.stdout, compared.stdout[-1500:]
