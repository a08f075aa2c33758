"""Blind pools: the union of the runs' top results plus the known answers, with no trace of the runs."""

import json
import re

import pytest

from judging_fixtures import DOCS, QUESTIONS, RUNS, write_run
from gabarito.core.runs import Run
from gabarito.errors import GabaritoError
from gabarito.inputs.documents import load_documents
from gabarito.inputs.items import Document
from gabarito.judging.pool import (known_answers, lock_path, make_pool, pool_pairs, question_texts, read_pool,
                                   read_run, write_pool)


def _pool(collection, *, depth=2, seed=7, known=True):
    docs = load_documents(collection["documents"])
    runs = {str(p): read_run(p) for p in collection["runs"]}
    return make_pool(runs, docs, question_texts(collection["evaluation"], docs), depth=depth, seed=seed,
                     known=known_answers(collection["evaluation"], docs) if known else None)


def _candidates(pool) -> dict[str, list[str]]:
    return {q["id"]: [c["doc"] for c in q["candidates"]] for q in pool["questions"]}


def test_union_of_top_depth_plus_known_answers_deduplicated(collection):
    pool = _candidates(_pool(collection, depth=2))
    for q in ("qa", "qb"):
        expected = {d for run in RUNS.values() for d in run[q][:2]} | {
            d for rec in QUESTIONS if rec["id"] == q for d in rec["relevantIds"]}
        assert sorted(pool[q]) == sorted(expected) and len(pool[q]) == len(set(pool[q]))
    assert "d6" not in pool["qb"]  # third in one run only: below depth 2


def test_pool_file_carries_no_run_names_ranks_or_scores(collection, tmp_path):
    path = tmp_path / "pool.json"
    write_pool(path, _pool(collection))
    text = path.read_text(encoding="utf-8")
    for name in RUNS:
        assert name not in text
    for run_file in collection["runs"]:
        assert run_file.name not in text and run_file.stem not in text
    assert not re.search(r'"(rank|ranks|score|scores|run|runs|method|methods|source|sources|known|expected)"', text)
    assert "Q0" not in text and ".123456" not in text and "123456" not in text
    data = json.loads(text)
    assert set(data["meta"]) >= {"depth", "seed", "n_runs"}
    for q in data["questions"]:
        assert set(q) == {"id", "text", "candidates"}
        for c in q["candidates"]:
            assert set(c) == {"pair", "doc", "title", "text"} and re.fullmatch(r"P\d{5}", c["pair"])
    assert [p for p, _, _ in pool_pairs(data)] == [f"P{i:05d}" for i in range(1, data["meta"]["n_pairs"] + 1)]


def test_order_follows_the_recorded_seed(collection):
    a, b = _pool(collection, seed=7), _pool(collection, seed=7)
    assert pool_pairs(a) == pool_pairs(b) and a["meta"]["seed"] == 7
    orders = {tuple(pool_pairs(_pool(collection, seed=s))) for s in range(8)}
    assert len(orders) > 1
    # the known answer does not sit at a fixed place: over seeds, d1 (qa's known answer) moves
    places = {_candidates(_pool(collection, seed=s))["qa"].index("d1") for s in range(8)}
    assert len(places) > 1


def test_written_pool_is_frozen_and_never_rewritten(collection, tmp_path):
    path = tmp_path / "pool.json"
    sha = write_pool(path, _pool(collection))
    assert lock_path(path).exists()
    data, got = read_pool(path)
    assert got == sha and data["kind"] == "pool"
    with pytest.raises(GabaritoError, match="never rewritten"):
        write_pool(path, _pool(collection))
    path.write_text(path.read_text(encoding="utf-8").replace("Como troco", "Como mudo"), encoding="utf-8")
    with pytest.raises(GabaritoError, match="the pool was changed after it was frozen in pool.lock.json"):
        read_pool(path)


def test_unknown_document_or_question_is_one_line_naming_the_run(collection, tmp_path):
    bad = write_run(tmp_path / "bad.trec", "x", {"qa": ["d1", "nope"]})
    docs = [Document(**d) for d in DOCS]
    questions = {q["id"]: q["query"] for q in QUESTIONS}
    with pytest.raises(GabaritoError) as err:
        make_pool({str(bad): Run.from_trec(bad)}, docs, questions, depth=5, seed=1)
    assert "bad.trec" in str(err.value) and "'nope'" in str(err.value) and "\n" not in str(err.value)
    other = write_run(tmp_path / "other.trec", "x", {"qz": ["d1"]})
    with pytest.raises(GabaritoError, match=r"other\.trec.*'qz'"):
        make_pool({str(other): Run.from_trec(other)}, docs, questions, depth=5, seed=1)


def test_known_answers_from_trec_qrels_and_run_folders(collection, tmp_path):
    docs = load_documents(collection["documents"])
    qrels = tmp_path / "known.qrels"
    qrels.write_text("qa 0 d5 2\nqa 0 d6 0\nqb 0 d8 1\n", encoding="utf-8")
    assert known_answers(qrels, docs) == {"qa": ["d5"], "qb": ["d8"]}
    qrels.write_text("qa 0 d99 1\n", encoding="utf-8")
    with pytest.raises(GabaritoError, match=r"known\.qrels.*'d99'"):
        known_answers(qrels, docs)
    folder = tmp_path / "run_out"
    folder.mkdir()
    write_run(folder / "run.trec", "r", RUNS["denso_xyz"])
    (folder / "qrels.trec").write_text("qa 0 d1 1\n", encoding="utf-8")  # four columns: not a run
    assert read_run(folder).ids("qa") == RUNS["denso_xyz"]["qa"]
    write_run(folder / "second.trec", "r", RUNS["bm25_qwe"])
    with pytest.raises(GabaritoError, match="found 2"):
        read_run(folder)


def test_questions_from_trec_topics(collection, tmp_path):
    topics = tmp_path / "topics.txt"
    topics.write_text("<top>\n<num> 7 </num>\n<title> Como troco a senha? </title>\n</top>\n", encoding="utf-8")
    assert question_texts(topics, load_documents(collection["documents"])) == {"7": "Como troco a senha?"}
