"""gabarito evaluate reports any measure of the spine, adds graded ones by default when the
questions have several relevant documents, and reads TREC topics + qrels."""

import json

import pytest

from gabarito.cli import main
from gabarito.errors import GabaritoError
from gabarito.evaluation import GRADED_DEFAULT, EvalConfig, run_evaluation
from gabarito.inputs.documents import load_documents, load_evaluation
from gabarito.inputs.trec_topics import load_trec_evaluation
from gabarito.measure import metrics

DOCS = [
    {"id": "d1", "title": "Cats", "text": "cats purr and sleep on warm mats"},
    {"id": "d2", "title": "Dogs", "text": "dogs bark and fetch sticks in the park"},
    {"id": "d3", "title": "Birds", "text": "birds sing at dawn and build nests"},
    {"id": "d4", "title": "Fish", "text": "fish swim in cold rivers and warm seas"},
]


@pytest.fixture()
def files(tmp_path):
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps(DOCS))
    single = tmp_path / "single.json"
    single.write_text(json.dumps([{"query": "which animal purrs", "relevantIds": ["d1"]},
                                  {"query": "who barks in the park", "relevantIds": ["d2"]}]))
    multi = tmp_path / "multi.json"
    multi.write_text(json.dumps([{"query": "warm places animals like", "relevantIds": ["d1", "d4"]},
                                 {"query": "who barks in the park", "relevantIds": ["d2"]}]))
    return docs, single, multi


def _run(docs, evaluation, **cfg):
    documents = load_documents(docs)
    return run_evaluation(documents, load_evaluation(evaluation, documents),
                          EvalConfig(method="bm25", model=None, segmentation="document", **cfg), echo=None)


def test_single_answer_runs_add_no_measure_unless_asked(files):
    docs, single, _ = files
    assert _run(docs, single)["measures"] == []
    rec = _run(docs, single, measures=("P@1", "hit@2"))
    assert rec["measures"] == ["P@1", "hit@2"]
    values = [r["measures"]["P@1"] for r in rec["per_query"]]
    assert rec["summary"]["measures"]["P@1"]["value"] == pytest.approx(sum(values) / len(values))
    assert all(r["measures"]["hit@2"] >= r["measures"]["P@1"] for r in rec["per_query"])


def test_several_relevant_documents_add_graded_measures_that_match_the_spine(files):
    docs, _, multi = files
    rec = _run(docs, multi)
    assert tuple(rec["measures"]) == GRADED_DEFAULT
    row = next(r for r in rec["per_query"] if r["expected"] == ["d1", "d4"])
    returned = [x["id"] for x in row["returned"]]
    want = metrics.evaluate({"q": returned}, {"q": {"d1": 1, "d4": 1}}, list(GRADED_DEFAULT))
    assert row["measures"] == {m: want[m]["q"] for m in GRADED_DEFAULT}


def test_unknown_measure_is_a_one_line_error(files):
    docs, single, _ = files
    with pytest.raises(GabaritoError, match="unknown measure 'MAP@x'"):
        EvalConfig(method="bm25", model=None, measures=("MAP@x",)).effective()


def test_trec_topics_and_graded_qrels(files, tmp_path, capsys):
    docs, _, _ = files
    topics = tmp_path / "topics.trec"
    topics.write_text("<top>\n<num>1</num>\n<title>warm places animals like</title>\n</top>\n"
                      "<top>\n<num>2</num>\n<title>singing at dawn</title>\n</top>\n"
                      "<top>\n<num>3</num>\n<title>nothing judged</title>\n</top>\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 2\n1 0 d4 1\n1 0 d2 0\n2 0 d3 1\n")
    evaluation = load_trec_evaluation(topics, qrels, load_documents(docs))
    assert [q.id for q in evaluation] == ["1", "2"] and list(evaluation.skipped) == ["3"]
    assert evaluation[0].extra["relevance"] == {"d1": 2, "d4": 1}
    log = tmp_path / "runs" / "log.jsonl"
    code = main(["evaluate", "--documents", str(docs), "--evaluation", str(topics), "--qrels", str(qrels),
                 "--method", "bm25", "--segmentation", "document", "--log", str(log)])
    assert code == 0
    record = json.loads(log.read_text().splitlines()[0])
    assert tuple(record["measures"]) == GRADED_DEFAULT  # graded judgments: the graded measures by default
    row = next(r for r in record["per_query"] if r["id"] == "1")
    ids = [x["id"] for x in row["returned"]]
    assert row["measures"]["nDCG@10"] == pytest.approx(metrics.ndcg_at(ids, {"d1": 2, "d4": 1}, 10))
    bad = tmp_path / "bad.txt"
    bad.write_text("9 0 d1 1\n")
    assert main(["evaluate", "--documents", str(docs), "--evaluation", str(topics), "--qrels", str(bad),
                 "--method", "bm25", "--log", str(log)]) == 2
    assert "query id '9' is not a topic" in capsys.readouterr().err


def test_hybrid_fusion_choice_is_recorded_and_validated(files):
    docs, single, _ = files
    with pytest.raises(GabaritoError, match="unknown fusion"):
        EvalConfig(method="hybrid", fusion="borda").effective()
    with pytest.raises(GabaritoError, match="needs --engine arcadedb"):
        EvalConfig(method="hybrid", fusion_in="arcadedb").effective()
    with pytest.raises(GabaritoError, match="ArcadeDB fuses with"):
        EvalConfig(method="hybrid", engine="arcadedb", fusion_in="arcadedb", fusion="combmnz").effective()
    plain = EvalConfig(method="bm25", fusion="linear:0.3").effective()
    assert plain.fusion is None and plain.fusion_in == "python"  # nothing to fuse: blanked
    cfg = EvalConfig(method="hybrid", fusion="linear:0.3").effective()
    assert cfg.fusion == "linear:0.3" and cfg.fusion_in == "python"
