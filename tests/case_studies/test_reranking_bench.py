"""Fast tests of the reranking study's shared vocabulary (case-studies/reranking/rerank_bench.py):
measures of ranked lists, gold ranks, and the second reading's order (no model, no ArcadeDB)."""

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from gabarito.errors import GabaritoError
from gabarito.core.runs import Qrels, Run
from gabarito.retrieval.protocol import Queries
from gabarito.retrieval.score_table import ScoreTable

from studies.reranking.rerank_bench import Bench, chunk_gold, measures, pick_questions, ranks, read_again


def question(qid, relevant=(), answer=""):
    return SimpleNamespace(id=qid, query=f"query {qid}", relevant_ids=list(relevant), answer=answer)


def test_measures_and_ranks_of_lists_in_their_order():
    lists = {"a": ["x", "g", "h"], "b": [("y", 0.9), ("z", 0.8)], "c": ["g2"]}
    gold = {"a": ["g", "h"], "b": ["g"], "c": ["g2"]}
    assert ranks(lists, gold) == {"a": 2, "b": None, "c": 1}
    m = measures(lists, Qrels.from_lists(gold), hits=(1, 3))
    assert m == {"n": 3, "hit@1": pytest.approx(1 / 3), "hit@3": pytest.approx(2 / 3), "mrr": pytest.approx(0.5)}


def test_pick_questions_quick_keeps_every_sixth_answerable_and_three_unanswerable():
    qs = [question(f"q{i:03d}", ["d"] if i % 4 else []) for i in range(100)]
    assert pick_questions(qs, False) == qs
    quick = pick_questions(qs, True)
    assert sum(bool(q.relevant_ids) for q in quick) == 12 and sum(not q.relevant_ids for q in quick) == 3
    assert quick == [q for q in qs if q in quick]  # file order kept


def test_chunk_gold_refuses_an_answer_phrase_not_in_the_document():
    chunk = SimpleNamespace(id="d#0000", doc_id="d", start=0, end=11)
    docs = {"d": SimpleNamespace(text="hello world")}
    assert chunk_gold([question("q", ["d"], "world")], [chunk], docs) == {"q": ["d#0000"]}
    with pytest.raises(GabaritoError, match="not in d"):
        chunk_gold([question("q", ["d"], "absent")], [chunk], docs)


def test_read_again_keeps_the_first_stage_order_between_equal_reader_scores():
    chunks = [SimpleNamespace(id=i, text=t) for i, t in (("c3", "bb"), ("c1", "aa"), ("c2", "a"))]
    q = question("q", ["d"])
    bench = Bench(docs=[], questions=[q], chunks=chunks, bare_chunks=chunks, gold={"q": ["c1"]},
                  queries=Queries(["q"], [q.query]), cache=None)
    bench.runs["first"] = Run({"q": [("c3", 3.0), ("c1", 2.0), ("c2", 1.0)]})
    length = SimpleNamespace(name="len", score=lambda query, texts: [float(len(t)) for t in texts],
                             provenance=lambda: {})
    bench.tables["len"] = ScoreTable.compute(length, [q.query], [c.text for c in chunks])
    read = read_again(bench, "first", "len", 3)
    assert [d for d, _ in read["q"]] == ["c3", "c1", "c2"]  # c3 and c1 tie at 2.0: first-stage order
    assert ranks(read, bench.gold) == {"q": 2}
    assert [d for d, _ in read_again(bench, "first", "len", 1)["q"]] == ["c3", "c1", "c2"]
