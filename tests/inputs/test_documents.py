import json
from pathlib import Path

import pytest

from gabarito.inputs.documents import (
    Document,
    EvalQuery,
    Evaluation,
    corpus_sha256,
    evaluation_sha256,
    load_documents,
    load_evaluation,
)
from gabarito.errors import GabaritoError


def _json(tmp_path: Path, obj, name: str) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(obj), encoding="utf-8")
    return p


DOCS = [{"id": "a", "text": "Alpha text.", "title": "Alpha"}, {"id": "b", "text": "Beta text."}]


def _one_line(err: pytest.ExceptionInfo, *words: str) -> str:
    msg = str(err.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, msg
    return msg


# --- documents -------------------------------------------------------------------------------

def test_json_documents(tmp_path):
    docs = load_documents(_json(tmp_path, DOCS, "docs.json"))
    assert docs == [Document("a", "Alpha text.", "Alpha"), Document("b", "Beta text.", "")]


def test_markdown_folder_ids_titles_and_order(tmp_path):
    (tmp_path / "guides" / "deep").mkdir(parents=True)
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "b.md").write_text("# Bee\n\nBody of b.\n", encoding="utf-8")
    (tmp_path / "a.md").write_text("\ufeffNo heading here.\r\nSecond line.\r\n", encoding="utf-8")
    (tmp_path / "guides" / "install.md").write_text(
        "```\n# not a title\n```\n\n# Install Guide\n\nSteps.\n", encoding="utf-8")
    (tmp_path / "guides" / "deep" / "x.md").write_text("# X\n\n## Part\n\nText.", encoding="utf-8")
    (tmp_path / ".hidden" / "skip.md").write_text("# Skip\n\nno", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("ignored", encoding="utf-8")
    docs = load_documents(tmp_path)
    assert [d.id for d in docs] == ["a", "b", "guides/deep/x", "guides/install"]
    assert [d.title for d in docs] == ["", "Bee", "X", "Install Guide"]
    assert docs[0].text == "No heading here.\nSecond line.\n"  # BOM gone, \n line endings
    assert docs[1].text == "# Bee\n\nBody of b.\n"


def test_markdown_folder_empty_file_and_no_files(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "empty.md").write_text("  \n\n", encoding="utf-8")
    with pytest.raises(GabaritoError) as err:
        load_documents(tmp_path)
    _one_line(err, "empty.md", "record 1 (sub/empty)", "empty")
    empty = tmp_path / "nothing"
    empty.mkdir()
    with pytest.raises(GabaritoError) as err:
        load_documents(empty)
    _one_line(err, "nothing", "no Markdown")


def _beir(tmp_path: Path, corpus: list, queries: list, qrels: str, name: str = "test.tsv") -> Path:
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in queries), encoding="utf-8")
    (root / "qrels" / name).write_text(qrels, encoding="utf-8")
    return root


BEIR_CORPUS = [{"_id": "d1", "title": "One", "text": "first doc"}, {"_id": "d2", "title": "", "text": "second"},
               {"_id": "d3", "text": "third"}]
BEIR_QUERIES = [{"_id": "q1", "text": "find one"}, {"_id": "q2", "text": "no answer"},
                {"_id": "q3", "text": "find two", "metadata": {"x": 1}}]
BEIR_QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq3\td2\t2\nq3\td3\t1\nq2\td3\t0\n"


def test_beir_loading(tmp_path):
    root = _beir(tmp_path, BEIR_CORPUS, BEIR_QUERIES, BEIR_QRELS)
    docs = load_documents(root)
    assert docs == [Document("d1", "first doc", "One"), Document("d2", "second", ""), Document("d3", "third", "")]
    assert load_documents(root / "corpus.jsonl") == docs
    ev = load_evaluation(root, docs)
    assert isinstance(ev, Evaluation) and isinstance(ev, list)
    assert [(q.id, q.query, q.relevant_ids) for q in ev] == [("q1", "find one", ("d1",)),
                                                             ("q3", "find two", ("d2", "d3"))]
    assert ev.skipped == ("q2",)  # score 0 only: not relevant, so skipped and counted
    assert ev[1].extra == {"metadata": {"x": 1}, "relevance": {"d2": 2, "d3": 1}}


def test_beir_qrels_other_name_and_errors(tmp_path):
    root = _beir(tmp_path, BEIR_CORPUS, BEIR_QUERIES, "q1\td1\t1\n", name="dev.tsv")
    assert [q.id for q in load_evaluation(root)] == ["q1"]  # the only qrels file, no header
    (root / "qrels" / "train.tsv").write_text("q1\td2\t1\n", encoding="utf-8")
    with pytest.raises(GabaritoError) as err:
        load_evaluation(root)
    _one_line(err, "dev.tsv, train.tsv")
    assert [q.relevant_ids for q in load_evaluation(root, split="train")] == [("d2",)]


@pytest.mark.parametrize("qrels, words", [
    ("q1\tnope\t1\n", ["test.tsv", "line 1 (q1 nope)", "relevant id 'nope' is not in the documents"]),
    ("q9\td1\t1\n", ["test.tsv", "line 1 (q9 d1)", "not in queries.jsonl"]),
    ("q1\td1\n", ["test.tsv", "line 1", "3 columns"]),
    ("q1\td1\thigh\n", ["test.tsv", "line 1 (q1 d1)", "not a number"]),
    ("q1\td1\t0\n", ["queries.jsonl", "no query has a relevant id", "3 queries without qrels"]),
])
def test_beir_bad_qrels(tmp_path, qrels, words):
    root = _beir(tmp_path, BEIR_CORPUS, BEIR_QUERIES, qrels)
    with pytest.raises(GabaritoError) as err:
        load_evaluation(root, load_documents(root))
    _one_line(err, *words)


def test_beir_bad_queries_and_corpus(tmp_path):
    root = _beir(tmp_path, BEIR_CORPUS + [{"_id": "d1", "text": "again"}], BEIR_QUERIES, BEIR_QRELS)
    with pytest.raises(GabaritoError) as err:
        load_documents(root)
    _one_line(err, "corpus.jsonl", "record 4 (d1)", "duplicate document id 'd1'")
    root = _beir(tmp_path / "x", BEIR_CORPUS, BEIR_QUERIES + [{"_id": "q1", "text": "twice"}], BEIR_QRELS)
    with pytest.raises(GabaritoError) as err:
        load_evaluation(root)
    _one_line(err, "queries.jsonl", "record 4 (q1)", "duplicate query id")
    root = _beir(tmp_path / "y", BEIR_CORPUS, [{"_id": "q1", "text": " "}], BEIR_QRELS)
    with pytest.raises(GabaritoError) as err:
        load_evaluation(root)
    _one_line(err, "queries.jsonl", "record 1 (q1)", "empty query")


# --- bad documents ---------------------------------------------------------------------------

@pytest.mark.parametrize("records, words", [
    (DOCS + [{"id": "a", "text": "again"}], ["record 3 (a)", "duplicate document id 'a'"]),
    ([{"id": "a", "text": "   \n"}], ["record 1 (a)", "text is empty"]),
    ([{"id": "a", "text": "ok"}, {"text": "no id"}], ["record 2", "'id'"]),
    ([{"id": "a"}], ["record 1 (a)", "'text'"]),
    ([{"id": "a", "text": "ok", "title": 3}], ["record 1 (a)", "'title'"]),
    (["just a string"], ["record 1", "expected an object"]),
    ([], ["no documents"]),
])
def test_bad_documents(tmp_path, records, words):
    with pytest.raises(GabaritoError) as err:
        load_documents(_json(tmp_path, records, "docs.json"))
    _one_line(err, "docs.json", *words)


def test_documents_json_not_a_list_invalid_and_missing(tmp_path):
    with pytest.raises(GabaritoError) as err:
        load_documents(_json(tmp_path, {"docs": DOCS}, "docs.json"))
    _one_line(err, "docs.json", "expected a JSON list", "object")
    bad = tmp_path / "broken.json"
    bad.write_text('[{"id": "a",\n', encoding="utf-8")
    with pytest.raises(GabaritoError) as err:
        load_documents(bad)
    _one_line(err, "broken.json", "invalid JSON at line")
    with pytest.raises(GabaritoError) as err:
        load_documents(tmp_path / "missing.json")
    _one_line(err, "missing.json", "not found")


def test_non_utf8_reports_byte_offset(tmp_path):
    p = tmp_path / "docs.json"
    p.write_bytes(b'[{"id": "a", "text": "caf\xe9"}]')
    with pytest.raises(GabaritoError) as err:
        load_documents(p)
    _one_line(err, "docs.json", "not valid UTF-8 at byte 25")
    folder = tmp_path / "md"
    folder.mkdir()
    (folder / "bad.md").write_bytes(b"# T\n\n\xff")
    with pytest.raises(GabaritoError) as err:
        load_documents(folder)
    _one_line(err, "bad.md", "byte 5")
    q = tmp_path / "eval.json"
    q.write_bytes(b"\x80[]")
    with pytest.raises(GabaritoError) as err:
        load_evaluation(q)
    _one_line(err, "eval.json", "byte 0")


# --- evaluation ------------------------------------------------------------------------------

def test_json_evaluation(tmp_path):
    docs = load_documents(_json(tmp_path, DOCS, "docs.json"))
    ev = load_evaluation(_json(tmp_path, [
        {"query": " What is alpha? ", "relevantIds": ["a"], "type": "lookup", "severity": "high",
         "answer": "Alpha text", "note": "kept"},
        {"id": "custom", "query": "Both?", "relevantIds": ["b", "a"]},
        {"query": "Unanswerable?", "relevantIds": []},
    ], "eval.json"), docs)
    assert ev == [
        EvalQuery("q001", "What is alpha?", ("a",), "lookup", "high", "Alpha text", {"note": "kept"}),
        EvalQuery("custom", "Both?", ("b", "a")),
        EvalQuery("q003", "Unanswerable?", ()),
    ]
    assert ev.skipped == () and Path(ev.path).name == "eval.json"


@pytest.mark.parametrize("records, words", [
    ([{"id": "x", "query": "  ", "relevantIds": ["a"]}], ["record 1 (x)", "empty query"]),
    ([{"query": "ok", "relevantIds": ["a"]}, {"query": "", "relevantIds": ["a"]}], ["record 2 (q002)", "empty query"]),
    ([{"query": "ok", "relevantIds": ["zzz"]}], ["record 1 (q001)", "'zzz' is not in the documents"]),
    ([{"query": "ok", "relevantIds": "a"}], ["record 1 (q001)", "list of non-empty strings"]),
    ([{"query": "ok", "relevantIds": ["a", 2]}], ["record 1 (q001)", "list of non-empty strings"]),
    ([{"query": "ok"}], ["record 1 (q001)", "missing 'relevantIds'"]),
    ([{"query": "ok", "relevantIds": ["a", "a"]}], ["record 1 (q001)", "repeats 'a'"]),
    ([{"id": "k", "query": "ok", "relevantIds": ["a"]}, {"id": "k", "query": "again", "relevantIds": ["b"]}],
     ["record 2 (k)", "duplicate query id 'k'"]),
    ([{"query": "ok", "relevantIds": ["a", "b", "c"]}], ["record 1 (q001)", "larger than the corpus can answer"]),
    ([{"query": "ok", "relevantIds": []}, {"query": "also", "relevantIds": []}], ["no query has a relevant id"]),
    ([], ["no query has a relevant id"]),
    ([{"query": "ok", "relevantIds": ["a"], "severity": 3}], ["record 1 (q001)", "'severity'"]),
    ([7], ["record 1", "expected an object"]),
])
def test_bad_evaluation(tmp_path, records, words):
    docs = [Document("a", "A"), Document("b", "B")]
    with pytest.raises(GabaritoError) as err:
        load_evaluation(_json(tmp_path, records, "eval.json"), docs)
    _one_line(err, "eval.json", *words)


def test_evaluation_not_a_list(tmp_path):
    with pytest.raises(GabaritoError) as err:
        load_evaluation(_json(tmp_path, {"query": "x"}, "eval.json"))
    _one_line(err, "eval.json", "expected a JSON list")


def test_evaluation_without_documents_skips_corpus_checks(tmp_path):
    ev = load_evaluation(_json(tmp_path, [{"query": "ok", "relevantIds": ["anything"]}], "eval.json"))
    assert ev[0].relevant_ids == ("anything",)
    # documents may also be given as ids
    with pytest.raises(GabaritoError, match="not in the documents"):
        load_evaluation(tmp_path / "eval.json", ["a", "b"])


# --- hashes ----------------------------------------------------------------------------------

def test_hashes_are_stable_and_content_sensitive(tmp_path):
    docs = [Document("a", "Alpha", "T"), Document("b", "Beta")]
    h = corpus_sha256(docs)
    assert len(h) == 64 and h == corpus_sha256([Document("a", "Alpha", "T"), Document("b", "Beta")])
    assert h != corpus_sha256([Document("a", "Alpha!", "T"), Document("b", "Beta")])
    assert h != corpus_sha256([Document("a", "Alpha", ""), Document("b", "Beta")])
    q = [EvalQuery("q1", "x?", ("a",), extra={"k": 1, "j": 2})]
    e = evaluation_sha256(q)
    assert e == evaluation_sha256([EvalQuery("q1", "x?", ("a",), extra={"j": 2, "k": 1})])
    assert e != evaluation_sha256([EvalQuery("q1", "x?", ("b",), extra={"k": 1, "j": 2})])
    assert e != evaluation_sha256([EvalQuery("q1", "x?", ("a",), severity="high", extra={"k": 1, "j": 2})])
    # a loaded file hashes the same however it is formatted on disk
    p1 = tmp_path / "e1.json"
    p2 = tmp_path / "e2.json"
    p1.write_text(json.dumps([{"query": "x?", "relevantIds": ["a"]}]), encoding="utf-8")
    p2.write_text(json.dumps([{"relevantIds": ["a"], "query": "x?"}], indent=4), encoding="utf-8")
    assert evaluation_sha256(load_evaluation(p1)) == evaluation_sha256(load_evaluation(p2))
