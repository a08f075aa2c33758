import pytest

from gabarito.errors import GabaritoError
from gabarito.core.runs import Qrels, Run


def test_run_sorts_by_score_then_doc_id_and_rejects_duplicates():
    run = Run({"q": [("b", 1.0), ("a", 1.0), ("c", 2.0)]})
    assert run.ids("q") == ["c", "a", "b"]
    assert Run({"q": ["x", "y"]}).ids("q") == ["x", "y"]  # plain ids keep their order
    with pytest.raises(GabaritoError, match="twice"):
        Run({"q": [("a", 1.0), ("a", 0.5)]})


def test_run_cut_and_trec_round_trip(tmp_path):
    run = Run({"q2": [("a", 0.5), ("b", 0.25)], "q1": [("c", 1.0)]})
    assert run.cut(1)["q2"] == [("a", 0.5)]
    path = run.write_trec(tmp_path / "r.trec", "tag")
    assert path.read_text().splitlines()[0] == "q2 Q0 a 1 0.500000 tag"
    assert Run.from_trec(path) == run
    (tmp_path / "bad.trec").write_text("q1 Q0 a 1 x tag\n")
    with pytest.raises(GabaritoError, match="line 1"):
        Run.from_trec(tmp_path / "bad.trec")


def test_qrels_grades_relevance_and_trec(tmp_path):
    qrels = Qrels({"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"d": 0}})
    assert qrels.relevant("q1") == {"a", "b"} and qrels.relevant("q1", 2) == {"a"}
    assert qrels.judged() == ["q1"]
    assert qrels.at_least(2) == {"q1": {"a": 1}, "q2": {}}
    assert Qrels.from_trec(qrels.write_trec(tmp_path / "q.txt")) == qrels
    with pytest.raises(GabaritoError):
        Qrels({"q": {"a": 1.5}})
    assert Qrels.single({"q": "a"}) == {"q": {"a": 1}}
    assert Qrels.from_lists({"q": ["a", "b"], "r": []}) == {"q": {"a": 1, "b": 1}, "r": {}}
