"""Issue 39: every input validated at the door -- ids, Markdown folders, BOMs -- driven through
``gabarito evaluate`` (and ``compare``, which reads the TREC files a run wrote).

Before: a document id holding a newline wrote extra lines into ``run.trec`` (F4); a file named
``trocas e devoluções.md`` evaluated with exit 0 and left ``run.trec``/``qrels.trec`` that
``compare`` and ``pool`` could not read (F21); an NFD id beside an NFC one was "not in the
documents" (F27); ``.MD``/``.markdown`` files were skipped without a word (F10); one ``.md`` file
as ``--documents`` was "invalid JSON" and a numeric query "empty query" (F28); three unknown ids
named only the first (issue 42).
"""

from __future__ import annotations

import json
import unicodedata

import pytest

from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError
from tests.reliability.test_reliability_cli import (DOCS, QUESTIONS, assert_one_line_error, evaluate,  # noqa: F401
                                                    gabarito, project)

BOM = "\ufeff"


def _write_json(path, value, *, prefix: str = "") -> str:
    path.write_text(prefix + json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path.name


def _warnings(proc) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("gabarito: warning: ")]


def _nothing_written(project) -> None:
    assert not list(project.rglob("run.json")) and not list(project.rglob("run.trec"))


# -- F4: an id with a newline (or any blank or control character) never reaches a TREC file ----------

@pytest.mark.parametrize(("bad", "named"), [
    ("refunds\nq2 Q0 shipping 1 99.0 x", "a line feed (U+000A)"),
    ("refunds guide", "a space (U+0020)"),
    ("refunds\tguide", "a tab (U+0009)"),
    ("refunds\u200bguide", "a zero width space (U+200B)"),
], ids=["newline", "space", "tab", "zero-width"])
def test_cli_a_document_id_a_trec_line_cannot_carry_is_refused(project, bad, named):
    docs = [{"id": bad, "text": DOCS["refunds"]}, {"id": "shipping", "text": DOCS["shipping"]},
            {"id": "account", "text": DOCS["account"]}]
    name = _write_json(project / "docs.json", docs)
    assert_one_line_error(evaluate(project, documents=name), "docs.json", "record 1", named,
                          "ids cannot hold blanks or control characters")
    _nothing_written(project)


def test_cli_a_question_or_relevant_id_with_a_blank_is_refused(project):
    _write_json(project / "ev.json", [{**QUESTIONS[0], "id": "q 1"}, *QUESTIONS[1:]])
    assert_one_line_error(evaluate(project, evaluation="ev.json"), "ev.json", "record 1", "'q 1' holds a space")
    _write_json(project / "ev.json", [{**QUESTIONS[0], "relevantIds": ["refunds\r"]}, *QUESTIONS[1:]])
    assert_one_line_error(evaluate(project, evaluation="ev.json"), "ev.json", "record 1 (q1)",
                          "relevant id 'refunds\\r' holds a carriage return")
    _nothing_written(project)


def test_the_trec_writers_refuse_an_id_no_caller_may_write(tmp_path):
    """The guard beneath every caller (studies, judging, evaluate): no line is written."""
    for write in (lambda p: Run({"q1": [("a\nb", 1.0)]}).write_trec(p, "tag"),
                  lambda p: Run({"q 1": [("a", 1.0)]}).write_trec(p, "tag"),
                  lambda p: Run({"q1": [("a", 1.0)]}).write_trec(p, "my tag"),
                  lambda p: Qrels({"q1": {"a\x1bb": 1}}).write_trec(p)):
        with pytest.raises(GabaritoError, match="an id in a TREC file cannot hold blanks"):
            write(tmp_path / "out.trec")
        assert not (tmp_path / "out.trec").exists()


# -- F21: blanks in Markdown file names become _, the run's TREC files stay readable ------------------

def test_cli_a_file_name_with_blanks_becomes_an_id_with_underscores_and_compare_reads_the_run(project):
    (project / "docs" / "refunds.md").rename(project / "docs" / "trocas e devoluções.md")
    ev = [{**QUESTIONS[0], "relevantIds": ["trocas_e_devoluções"]}, *QUESTIONS[1:]]
    _write_json(project / "ev.json", ev)
    first = evaluate(project, "--out", "runs/a", evaluation="ev.json")
    assert first.returncode == 0, first.stderr[-1500:]
    assert _warnings(first) == ["gabarito: warning: docs: 1 file name(s) hold blanks, made _ in their document "
                                "ids: 'trocas e devoluções.md' -> 'trocas_e_devoluções'"]
    assert "q1 Q0 trocas_e_devoluções 1 " in (project / "runs" / "a" / "run.trec").read_text(encoding="utf-8")
    second = evaluate(project, "--out", "runs/b", "--k", "5", evaluation="ev.json")
    assert second.returncode == 0, second.stderr[-1500:]
    compared = gabarito("compare", "runs/a", "runs/b", "--measure", "nDCG@1", cwd=project)
    assert compared.returncode == 0, compared.stderr[-1500:]
    assert "nDCG@1" in compared.stdout


def test_cli_the_file_name_as_relevant_id_is_refused_with_the_id_to_write(project):
    (project / "docs" / "refunds.md").rename(project / "docs" / "trocas e devoluções.md")
    _write_json(project / "ev.json", [{**QUESTIONS[0], "relevantIds": ["trocas e devoluções"]}, *QUESTIONS[1:]])
    proc = evaluate(project, evaluation="ev.json")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    error = proc.stderr.strip().splitlines()[-1]
    assert error.startswith("gabarito: error: ev.json: record 1 (q1): relevant id 'trocas e devoluções' holds blanks")
    assert "the documents name it 'trocas_e_devoluções'" in error
    _nothing_written(project)


@pytest.mark.parametrize(("names", "needle"), [
    (["refunds guide.md", "refunds_guide.md"], "both have the id 'refunds_guide'"),
    (["refunds.md", "refunds.MD"], "both have the id 'refunds'"),
    (["refunds\tguide.md"], "a tab (U+0009)"),
    (["refunds\nguide.md"], "a line feed (U+000A)"),
], ids=["blank-collision", "extension-collision", "tab", "newline"])
def test_cli_file_names_that_cannot_give_one_id_each_are_refused(project, names, needle):
    for name in names:
        (project / "docs" / name).write_text("# Extra\n\nrefund rules again\n", encoding="utf-8")
    proc = evaluate(project)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    error = proc.stderr.strip().splitlines()[-1]
    assert error.startswith("gabarito: error: docs") and needle in error, error
    _nothing_written(project)


# -- F27: NFD and NFC ids are one id ----------------------------------------------------------------

def test_cli_an_nfd_relevant_id_matches_the_nfc_document_with_one_warning(project):
    nfc = "devoluções"
    (project / "docs" / "refunds.md").rename(project / "docs" / f"{nfc}.md")
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfd != nfc
    _write_json(project / "ev.json", [{**QUESTIONS[0], "relevantIds": [nfd]}, *QUESTIONS[1:]])
    proc = evaluate(project, evaluation="ev.json")
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert _warnings(proc) == [f"gabarito: warning: ev.json: 1 id(s) written in decomposed Unicode were read in "
                               f"the composed form (NFC) every id is compared in: '{nfc}'"]
    record = json.loads(next(project.rglob("run.json")).read_text(encoding="utf-8"))
    assert record["per_query"][0]["expected"] == [nfc] and record["per_query"][0]["hit@1"] is True


def test_cli_an_nfd_file_name_gives_an_nfc_id(project):
    nfc = "devoluções"
    (project / "docs" / "refunds.md").rename(project / "docs" / unicodedata.normalize("NFD", f"{nfc}.md"))
    _write_json(project / "ev.json", [{**QUESTIONS[0], "relevantIds": [nfc]}, *QUESTIONS[1:]])
    proc = evaluate(project, evaluation="ev.json")
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert len(_warnings(proc)) == 1 and "docs: 1 id(s) written in decomposed Unicode" in proc.stderr


# -- F10, F28: Markdown extensions in any case, one Markdown file, a numeric query --------------------

def test_cli_md_in_any_case_and_markdown_are_read_and_the_rest_counted(project):
    (project / "docs" / "refunds.md").rename(project / "docs" / "refunds.MD")
    (project / "docs" / "shipping.md").rename(project / "docs" / "shipping.markdown")
    (project / "docs" / "notes.txt").write_text("not a document\n", encoding="utf-8")
    proc = evaluate(project)
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert _warnings(proc) == ["gabarito: warning: docs: read 3 Markdown file(s) (1 .MD, 1 .markdown, 1 .md); "
                               "1 other file(s) skipped (1 .txt)"]
    record = json.loads(next(project.rglob("run.json")).read_text(encoding="utf-8"))
    assert record["n_documents"] == 3 and all(row["hit@1"] for row in record["per_query"])


def test_cli_one_markdown_file_is_a_documents_input(project):
    _write_json(project / "ev.json", [QUESTIONS[0]])
    proc = evaluate(project, documents="docs/refunds.md", evaluation="ev.json")
    assert proc.returncode == 0, proc.stderr[-1500:]
    record = json.loads(next(project.rglob("run.json")).read_text(encoding="utf-8"))
    assert record["n_documents"] == 1 and record["per_query"][0]["returned"][0]["id"] == "refunds"


def test_cli_a_numeric_query_is_named_as_a_number(project):
    _write_json(project / "ev.json", [{**QUESTIONS[0], "query": 12345}, *QUESTIONS[1:]])
    assert_one_line_error(evaluate(project, evaluation="ev.json"), "ev.json", "record 1 (q1)",
                          "'query' must be the question's text (a JSON string), not the number 12345")


# -- issue 42: every unknown id counted, the first few named -----------------------------------------

def test_cli_three_unknown_ids_are_counted_and_named(project):
    ev = [{**q, "relevantIds": [f"nope{i}"]} for i, q in enumerate(QUESTIONS, start=1)]
    _write_json(project / "ev.json", ev)
    assert_one_line_error(evaluate(project, evaluation="ev.json"), "ev.json: record 1 (q1)",
                          "relevant id 'nope1' is not in the documents; 3 references to 3 unknown id(s) in all: "
                          "'nope1' (record 1 (q1)), 'nope2' (record 2 (q2)), 'nope3' (record 3 (q3))")


# -- F26: a byte-order mark before any input ---------------------------------------------------------

def test_cli_every_input_may_start_with_a_bom(project):
    docs = [{"id": name, "text": text} for name, text in DOCS.items()]
    _write_json(project / "docs.json", docs, prefix=BOM)
    _write_json(project / "ev.json", QUESTIONS, prefix=BOM)
    for path in (project / "docs").iterdir():
        path.write_text(BOM + path.read_text(encoding="utf-8"), encoding="utf-8")
    beir = project / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(BOM + "".join(json.dumps({"_id": d["id"], "text": d["text"]}) + "\n"
                                                     for d in docs), encoding="utf-8")
    (beir / "queries.jsonl").write_text(BOM + '{"_id": "1", "text": "refund within thirty days"}\n', encoding="utf-8")
    (beir / "qrels" / "test.tsv").write_text(BOM + "query-id\tcorpus-id\tscore\n1\trefunds\t1\n", encoding="utf-8")
    (project / "topics.txt").write_text(BOM + "<top><num>1</num><title>refund within thirty days</title></top>\n",
                                        encoding="utf-8")
    (project / "qrels.txt").write_text(BOM + "1 0 refunds 1\n", encoding="utf-8")
    inputs = [("docs.json", "ev.json", ()), ("docs", "ev.json", ()), ("beir", "beir", ()),
              ("beir/corpus.jsonl", "topics.txt", ("--qrels", "qrels.txt"))]
    for i, (documents, evaluation, extra) in enumerate(inputs):
        proc = evaluate(project, *extra, "--out", f"runs/r{i}", documents=documents, evaluation=evaluation)
        assert proc.returncode == 0, (documents, evaluation, proc.stderr[-1500:])
        record = json.loads((project / "runs" / f"r{i}" / "run.json").read_text(encoding="utf-8"))
        assert record["per_query"][0]["hit@1"] is True, (documents, evaluation)


# -- huge inputs: a file larger than the memory the process may use ---------------------------------

def test_cli_an_evaluation_file_larger_than_memory_is_one_line(project):
    """A 120 MB answer text under a 500 MB address-space limit: before, a MemoryError traceback
    (from the evaluation's hash, or from reading the file, depending on where memory ran out)."""
    with open(project / "huge.json", "w", encoding="utf-8") as f:
        f.write(json.dumps([QUESTIONS[0]])[:-2] + ', "answer": "')
        f.write("a" * (120 << 20))
        f.write('"}]')

    def limited():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (500 << 20, 500 << 20))

    proc = evaluate(project, evaluation="huge.json", preexec_fn=limited)
    line = assert_one_line_error(proc)
    assert "too large to read into memory" in line or "out of memory" in line, line
    _nothing_written(project)
