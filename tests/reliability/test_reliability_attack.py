"""What the round's own attack (after issue 22's changes) still broke, driven through ``gabarito``.

Each case was a traceback, a silent drop or a number from an edited record; each is now one line
naming the file (and record), exit 2, or a cell a spreadsheet cannot run.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from gabarito.study.integrity import record
from tests.reliability.test_reliability_cli import (assert_one_line_error, evaluate, gabarito,  # noqa: F401
                                                    project, run_ids)


def _beir(folder: Path, qrels: str) -> Path:
    """A BEIR folder of two documents and two queries with the given ``qrels/test.tsv``."""
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "Refunds", "text": "refund within thirty days"}\n'
        '{"_id": "d2", "title": "Shipping", "text": "track the parcel by email"}\n', encoding="utf-8")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "refund"}\n{"_id": "q2", "text": "parcel"}\n',
                                          encoding="utf-8")
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels, encoding="utf-8")
    return folder


@pytest.mark.parametrize(("qrels", "needle"), [
    ("q1\td1\t1\nq2\td2\tnan\n", "'nan' is not a finite number"),
    ("q1\td1\t1\nq2\td2\tinf\n", "'inf' is not a finite number"),
    ("q1\td1\t1\nq1\td1\t0\nq2\td2\t1\n", "judged twice with different scores"),
], ids=["nan", "inf", "contradiction"])
def test_cli_a_qrels_score_that_is_no_finite_number_or_contradicts_itself_is_named(tmp_path, qrels, needle):
    """Before: ``nan`` dropped the question silently (exit 0), ``inf`` was an OverflowError
    traceback, and two lines judging one pair differently were taken silently."""
    beir = _beir(tmp_path / "beir", qrels)
    proc = gabarito("evaluate", "--documents", str(beir), "--evaluation", str(beir), "--method", "bm25",
                    "--log", "runs/log.jsonl", cwd=tmp_path)
    assert_one_line_error(proc, "test.tsv", needle)
    assert not (tmp_path / "runs").exists()


def test_cli_a_device_as_evaluation_file_is_refused_not_read_forever(project):
    """Before: ``--evaluation /dev/zero`` read without end (0.7 GB/s) until memory ran out."""
    proc = evaluate(project, evaluation="/dev/zero", timeout=60)
    assert_one_line_error(proc, "/dev/zero", "not a regular file")


def test_cli_compare_of_a_run_file_that_is_not_utf8_is_one_line(project):
    """Before: a UnicodeDecodeError traceback, exit 1."""
    bad = project / "run.json"
    bad.write_bytes(b'{"run_id": "\xff\xfe"}')
    record(bad, when="2026-12-07T00:00:00+00:00")  # as evaluate would: compare trusts no unrecorded run
    proc = gabarito("compare", str(bad), str(bad), cwd=project)
    assert_one_line_error(proc, "run.json", "not UTF-8")


def test_cli_compare_refuses_a_log_record_edited_after_its_run(project):
    """Before: two returned documents of one question swapped by hand in the log gave another
    top-1 and MRR, exit 0, no warning, although the record's own summary disagreed."""
    for _ in range(2):
        assert evaluate(project).returncode == 0
    log = project / "runs" / "log.jsonl"
    first, second = run_ids(log)
    lines = log.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    row = next(r for r in record["per_query"] if r["answerable"] and len(r["returned"]) > 1 and r["hit@1"])
    row["returned"][0], row["returned"][1] = row["returned"][1], row["returned"][0]
    log.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8")
    proc = gabarito("compare", first, second, cwd=project)
    assert_one_line_error(proc, first, "changed after the run")


def test_cli_results_csv_cells_that_look_like_formulas_are_text(project):
    """Before: a question id or text starting with ``=``, ``+``, ``-`` or ``@`` reached the
    spreadsheet as a formula (CSV injection)."""
    questions = [{"id": "=HYPERLINK(\"http://x\")", "query": "@SUM(1,2) refund", "relevantIds": ["refunds"]},
                 {"id": "q2", "query": "-track the parcel", "relevantIds": ["shipping"]}]
    (project / "evaluation.json").write_text(json.dumps(questions), encoding="utf-8")
    assert evaluate(project).returncode == 0
    (run_id,) = run_ids(project / "runs" / "log.jsonl")
    with open(project / "runs" / run_id / "results.csv", encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))
    cells = [cell for row in rows[1:] for cell in row]
    assert "'=HYPERLINK(\"http://x\")" in cells and "'@SUM(1,2) refund" in cells and "'-track the parcel" in cells
    assert not any(cell.startswith(("=", "+", "@")) for cell in cells)
    record = json.loads((project / "runs" / run_id / "run.json").read_text(encoding="utf-8"))
    assert record["per_query"][0]["id"] == "=HYPERLINK(\"http://x\")"  # the record keeps the text as given


def test_cli_ctrl_c_while_gabarito_starts_is_one_line_and_130(project):
    """Before: Ctrl-C in the first ~0.4 s (while the modules load and the options are read) was a
    15-26 line KeyboardInterrupt traceback. Sent at several moments of the start; a run that had
    already finished (exit 0), or a signal that landed before any gabarito code ran (Python's own
    start-up, which no program can catch), says nothing to check."""
    import signal
    import subprocess
    import sys
    import time

    checked = 0
    for delay in (0.15, 0.25, 0.35, 0.45, 0.6, 0.8):
        proc = subprocess.Popen([sys.executable, "-m", "gabarito.cli", "evaluate", "--documents", "docs",
                                 "--evaluation", "evaluation.json", "--method", "bm25", "--log", "runs/log.jsonl"],
                                cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        if proc.returncode == 0 or ("Traceback" in err and "gabarito" not in err):
            continue
        checked += 1
        assert proc.returncode == 130 and "Traceback" not in err, (delay, proc.returncode, err[-1500:])
        assert err.strip().splitlines() == ["gabarito: interrupted"], (delay, err)
    assert checked >= 1


def test_cli_a_markdown_file_of_nul_bytes_is_refused_like_an_empty_one(project):
    """Before: a .md of three NUL bytes was indexed as a document, silently."""
    (project / "docs" / "blank.md").write_bytes(b"\x00\x00\x00")
    proc = evaluate(project)
    assert_one_line_error(proc, "blank.md", "NUL bytes")


def test_the_start_failure_names_the_damaged_database_from_the_log_or_its_files(tmp_path):
    """A database that stops the server is named with its folder: from the log when the server
    names it, else the one whose configuration no longer parses (the attack's D10 and D23)."""
    from gabarito.retrieval.arcadedb.server import start_failure

    databases = tmp_path / "databases"
    for name in ("eval_aaa", "eval_bbb"):
        (databases / name).mkdir(parents=True)
        (databases / name / "configuration.json").write_text("{}", encoding="utf-8")
    log = tmp_path / "server.log"
    log.write_text("old run\n=== gabarito: starting ArcadeDB on x ===\n"
                   "WARNI Page PageId(eval_bbb/0/0) has invalid content size\n"
                   "Caused by: com.arcadedb.exception.SerializationException: Invalid byte array length -38\n"
                   "\tat com.arcadedb.Binary.read(Binary.java:650)\n", encoding="utf-8")
    said = start_failure(log, databases)
    assert said.startswith("Invalid byte array length -38; the database 'eval_bbb' looks damaged")
    assert f"delete the folder {databases / 'eval_bbb'}" in said
    log.write_text("=== gabarito: starting ArcadeDB on x ===\nException in thread main "
                   "com.google.gson.JsonSyntaxException: End of input at line 2\n", encoding="utf-8")
    (databases / "eval_aaa" / "configuration.json").write_text('{"x":', encoding="utf-8")
    said = start_failure(log, databases)
    assert "End of input at line 2" in said and f"delete the folder {databases / 'eval_aaa'}" in said


def test_cli_a_label_with_an_escape_sequence_is_refused(project):
    """Before: an ANSI escape in --label was printed raw to the terminal."""
    proc = evaluate(project, "--label", "run \x1b[2J\x1b[31mred")
    assert_one_line_error(proc, "--label holds a control character")
    assert "\x1b" not in proc.stderr
