"""The columnar evaluation core against the per-query implementation it replaced (kept here, and
only here, as the reference) and against ir_measures: the same per-query values, bit for bit."""

import random

import ir_measures
import numpy as np
import pytest

from gabarito.core.columnar import ColumnarRun
from gabarito.core.measures import Measure
from gabarito.core.runs import Run
from gabarito.errors import GabaritoError
from gabarito.measure import metrics
from gabarito.measure.columnar import evaluate_columns
from gabarito.measure.metrics import as_ranking, evaluate

MEASURES = ["R@1", "R@3", "R@10", "R@100", "R@2000", "RR@10", "RR", "nDCG@5", "nDCG@10", "nDCG",
            "nDCG@3000", "P@10", "P@1000", "AP@100", "AP", "hit@1", "hit@10", "hit@5000"]


# ---------------------------------------------------------------- the reference (old evaluate)

def _reference_fn(name):
    measure = Measure(name)
    kind, k = measure.kind, measure.cutoff
    fns = {"R": metrics.recall_at, "P": metrics.precision_at, "hit": metrics.hit_at,
           "RR": metrics.reciprocal_rank, "nDCG": metrics.ndcg_at, "AP": metrics.average_precision}
    return lambda ids, grades: fns[kind](ids, grades, k)


def reference_evaluate(run, qrels, measures):
    fns = {name: _reference_fn(name) for name in measures}
    judged = sorted(q for q, grades in qrels.items() if any(g >= 1 for g in grades.values()))
    excluded = sorted(set(qrels) - set(judged))
    scores = {name: {} for name in measures}
    for qid in judged:
        ids = as_ranking(run.get(qid, []))
        for name, fn in fns.items():
            scores[name][qid] = fn(ids, qrels[qid])
    return scores, excluded


# ---------------------------------------------------------------- random collections

def random_collection(seed, *, n_queries=120, ties=True, graded=True):
    """Runs with tied scores, queries absent from the run, empty rankings, queries of the qrels
    without a relevant document, queries of the run absent from the qrels, graded judgments."""
    rng = random.Random(seed)
    pool = [f"d{i:04d}" for i in range(3000)] + ["D1", "a", "é9", "doc-β", "x" * 30]
    qrels, run = {}, {}
    for i in range(n_queries):
        qid = f"q{rng.randint(0, 10 ** 6)}-{i}"
        docs = rng.sample(pool, 40)
        n_rel = rng.choice([0, 1, 1, 2, 3, 5, 12])
        grades = {d: (rng.randint(1, 3) if graded else 1) for d in docs[:n_rel]}
        grades.update({d: 0 for d in docs[n_rel:n_rel + rng.randint(0, 4)]})
        if rng.random() < 0.9:
            qrels[qid] = grades
        shape = rng.random()
        if shape < 0.08:
            continue  # judged query missing from the run
        length = rng.choice([0, 1, 3, 10, 50, 150, 400])
        ranked = docs[:rng.randint(0, len(docs))] + rng.sample(pool, length)
        ranked = list(dict.fromkeys(ranked))[:length]
        rng.shuffle(ranked)
        levels = rng.randint(1, 4) if ties and rng.random() < 0.5 else 10 ** 6
        run[qid] = [(d, float(rng.randint(0, levels)) / 7.0) for d in ranked]
    return qrels, run


def assert_identical(ours, reference):
    values, excluded = reference
    assert ours.excluded == excluded
    assert list(ours) == list(values)
    for name in values:
        assert list(ours[name]) == list(values[name]), name
        for qid, value in values[name].items():
            assert ours[name][qid] == value, (name, qid, ours[name][qid], value)
            assert type(ours[name][qid]) is float


@pytest.mark.parametrize("seed", range(8))
def test_identical_to_the_per_query_loops(seed):
    qrels, run = random_collection(seed, ties=seed % 2 == 0, graded=seed % 3 != 0)
    assert_identical(evaluate(run, qrels, MEASURES), reference_evaluate(run, qrels, MEASURES))
    as_run = Run(run)
    assert_identical(evaluate(as_run, qrels, MEASURES), reference_evaluate(as_run, qrels, MEASURES))
    columns = ColumnarRun.from_run(run)
    assert_identical(evaluate(columns, qrels, MEASURES), reference_evaluate(run, qrels, MEASURES))


def test_the_random_collections_cover_the_cases():
    qrels, run = random_collection(0)
    judged = [q for q, g in qrels.items() if any(v >= 1 for v in g.values())]
    assert any(q not in run for q in judged)
    assert any(q in run and not run[q] for q in judged)
    assert any(q not in qrels for q in run)
    assert any(not any(v >= 1 for v in g.values()) for g in qrels.values())
    assert any(len({s for _, s in run[q]}) < len(run[q]) for q in judged if q in run)
    assert any(g >= 2 for grades in qrels.values() for g in grades.values())
    reference, _ = reference_evaluate(run, qrels, ["R@100", "nDCG@10"])
    assert 0 < sum(v > 0 for v in reference["nDCG@10"].values()) < len(judged)


def test_ties_go_to_the_smaller_doc_id_and_plain_ids_keep_their_order():
    qrels = {"q": {"b": 1, "c": 2}}
    tied = {"q": [("c", 1.0), ("a", 1.0), ("b", 1.0), ("z", 2.0)]}
    ours = evaluate(tied, qrels, ["RR@10", "nDCG@3", "AP"])
    assert ours["RR@10"]["q"] == 1 / 3  # z, a, b, c
    assert_identical(ours, reference_evaluate(tied, qrels, ["RR@10", "nDCG@3", "AP"]))
    plain = {"q": ["c", "a", "b"]}
    assert evaluate(plain, qrels, ["RR@10"])["RR@10"]["q"] == 1.0


def test_fractional_gains_count_in_ndcg_only():
    qrels = {"q": {"a": 1, "b": 0.5, "c": 0}}
    run = {"q": [("b", 3.0), ("a", 2.0), ("c", 1.0)]}
    names = ["nDCG@2", "nDCG", "R@1", "AP", "RR@10", "P@2"]
    assert_identical(evaluate(run, qrels, names), reference_evaluate(run, qrels, names))


def test_a_doc_twice_in_one_ranking_is_an_error():
    qrels = {"q": {"a": 1}}
    with pytest.raises(GabaritoError, match="'a' appears twice"):
        evaluate({"q": [("a", 1.0), ("b", 0.5), ("a", 0.2)]}, qrels, ["R@10"])
    with pytest.raises(GabaritoError, match="'b' appears twice"):
        evaluate({"q": ["b", "a", "b"]}, qrels, ["R@10"])
    with pytest.raises(GabaritoError, match="appears twice"):
        evaluate(ColumnarRun.from_run({"q": [("a", 1.0), ("a", 1.0)]}), qrels, ["R@10"])
    # an unjudged query is not read
    repeat_elsewhere = {"q": [("a", 1.0)], "other": [("x", 1.0), ("x", 0.5)]}
    assert evaluate(repeat_elsewhere, qrels, ["R@10"])["R@10"] == {"q": 1.0}
    columns = ColumnarRun.from_run(repeat_elsewhere)
    assert not columns.all_unique and evaluate(columns, qrels, ["R@10"])["R@10"] == {"q": 1.0}
    assert ColumnarRun.from_run({"q": [("a", 1.0)], "other": [("a", 1.0)]}).all_unique


def test_unknown_measure_and_empty_inputs():
    with pytest.raises(GabaritoError, match="unknown measure"):
        evaluate({}, {"q": {"d": 1}}, ["MAP@3"])
    result = evaluate({}, {"q": {"d": 1}, "z": {"d": 0}}, ["nDCG@10", "RR"])
    assert result == {"nDCG@10": {"q": 0.0}, "RR": {"q": 0.0}} and result.excluded == ["z"]
    assert evaluate({"q": [("d", 1.0)]}, {}, ["R@1"]) == {"R@1": {}}


def test_hash_collisions_fall_back_to_the_exact_join(monkeypatch):
    from gabarito.measure import columnar

    monkeypatch.setattr(columnar, "doc_hash", lambda docs, query=None: np.zeros(len(docs), np.uint64))
    monkeypatch.setattr(columnar, "with_query", lambda keys, query: np.zeros(len(keys), np.uint64))
    qrels, run = random_collection(3, n_queries=30)
    assert_identical(evaluate(run, qrels, MEASURES), reference_evaluate(run, qrels, MEASURES))


def test_columnar_round_trip_and_trec_reading(tmp_path):
    qrels, run = random_collection(5, n_queries=40)
    as_run = Run(run, name="r")
    columns = ColumnarRun.from_run(as_run)
    back = columns.to_run()
    nonempty = {q: p for q, p in as_run.items() if p}
    assert back == nonempty and list(back) == list(nonempty) and back.name == "r" and len(nonempty) < len(as_run)
    shuffled = np.random.default_rng(1).permutation(len(columns))
    mixed = ColumnarRun(columns.queries, columns.query[shuffled], columns.docs[shuffled], columns.score[shuffled])
    assert mixed.to_run() == back
    path = as_run.write_trec(tmp_path / "r.trec", "tag")
    read = ColumnarRun.from_trec(path)
    assert read.to_run() == Run.from_trec(path) == {q: [(d, float(f"{s:.6f}")) for d, s in p]
                                                    for q, p in as_run.items() if p}
    judged, _, values = evaluate_columns(read, qrels, ["nDCG@10"])
    assert values["nDCG@10"].tolist() == [evaluate(Run.from_trec(path), qrels, ["nDCG@10"])["nDCG@10"][q]
                                          for q in judged]


@pytest.mark.parametrize("text, message", [
    ("q Q0 d 1 0.5 t\nq Q0 e 2 0.4\n", "has 6 columns"),
    ("q Q0 d 1 0.5 t\nq Q0 e 2 0.4 t x\n", "has 6 columns"),
    ("q Q0 d 1 high t\n", "score 'high' is not a number"),
    ("q Q0 d 1 0.5 t\nq Q0 d 2 0.4 t\n", "'d' appears twice"),
])
def test_malformed_trec_files_are_one_line_errors(tmp_path, text, message):
    path = tmp_path / "bad.trec"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GabaritoError, match=message):
        Run.from_trec(path)


def test_trec_reading_keeps_ids_as_text(tmp_path):
    path = tmp_path / "r.trec"
    path.write_text("  007 Q0 NA 1 1e-3 t\n\n007\tQ0 0010 2 -0 t\r\nnull Q0 \"d 1 2 t\n", encoding="utf-8")
    run = Run.from_trec(path)
    assert run == {"007": [("NA", 1e-3), ("0010", -0.0)], "null": [('"d', 2.0)]}
    assert list(run) == ["007", "null"]


def test_odd_whitespace_is_read_as_python_splits_it(tmp_path):
    path = tmp_path / "r.trec"
    path.write_text("q Q0 d\u00a0x 1 2 t\n", encoding="utf-8")
    with pytest.raises(GabaritoError, match="has 6 columns"):
        Run.from_trec(path)
    path.write_text("q Q0 d 1 2\u2003t\n", encoding="utf-8")
    assert Run.from_trec(path) == {"q": [("d", 2.0)]}


def test_identical_to_ir_measures_when_scores_are_distinct():
    qrels, run = random_collection(9, ties=False)
    names = ["R@10", "R@100", "RR@10", "nDCG@10", "nDCG", "P@10", "AP@100", "AP", "hit@10"]
    ours = evaluate(run, qrels, names)
    parsed = [ir_measures.parse_measure(Measure(n).ir_measures_name) for n in names]
    by_str = {str(m): n for m, n in zip(parsed, names)}
    theirs = {n: {} for n in names}
    for metric in ir_measures.iter_calc(parsed, qrels, {q: dict(p) for q, p in run.items() if p}):
        theirs[by_str[str(metric.measure)]][metric.query_id] = metric.value
    compared = 0
    for name in names:
        for qid, value in ours[name].items():
            if run.get(qid):
                assert value == pytest.approx(theirs[name][qid], abs=1e-12), (name, qid)
                compared += 1
    assert compared > 50 * len(names)
