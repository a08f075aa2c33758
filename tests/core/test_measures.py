"""Measure declarations: names parse to kind and cutoff, print back as given, and bad names are
one-line errors naming them; ir_measures reads the mapped names as the same measures."""

import json
import pickle
import re

import pytest

from gabarito.core.measures import KINDS, Measure, parse_measures
from gabarito.errors import GabaritoError
from gabarito.measure import metrics

NAMES = ["R@1", "R@100", "RR@10", "RR", "nDCG@10", "nDCG", "P@10", "AP@100", "AP", "hit@1", "hit@5"]


@pytest.mark.parametrize("name", NAMES)
def test_round_trip(name):
    m = Measure(name)
    assert str(m) == name and m == name and hash(m) == hash(name)
    assert Measure.of(m.kind, m.cutoff) == m
    assert pickle.loads(pickle.dumps(m)).cutoff == m.cutoff
    assert json.dumps({m: 1}) == json.dumps({name: 1})


def test_kind_and_cutoff():
    assert (Measure("nDCG@10").kind, Measure("nDCG@10").cutoff) == ("nDCG", 10)
    assert (Measure("AP").kind, Measure("AP").cutoff) == ("AP", None)
    assert Measure(" hit@3 ") == "hit@3"
    assert {m.kind for m in map(Measure, NAMES)} == set(KINDS)


@pytest.mark.parametrize("bad", ["ndcg@10", "MAP@x", "R", "hit", "P", "RR@0", "RR@01", "nDCG@-1", "", "x@1"])
def test_bad_names_are_errors_naming_them(bad):
    with pytest.raises(GabaritoError, match=re.escape(repr(bad))):
        Measure(bad)


def test_not_a_string_is_an_error():
    with pytest.raises(GabaritoError, match="unknown measure 10"):
        Measure(10)
    with pytest.raises(GabaritoError, match="unknown measure 'nDCG'"):
        Measure.of("nDCG", 0)


def test_loose_parsing_is_case_blind_and_knows_mrr():
    assert Measure.parse("mrr@10", loose=True) == "RR@10"
    assert Measure.parse("NDCG@5", loose=True).kind == "nDCG"
    with pytest.raises(GabaritoError, match="unknown measure 'mrr@10'"):
        Measure.parse("mrr@10")
    with pytest.raises(GabaritoError, match="needs a cutoff"):
        Measure.parse("HIT", loose=True)


def test_parse_measures_list_and_string():
    assert parse_measures("nDCG@10, R@100,") == ["nDCG@10", "R@100"]
    assert all(isinstance(m, Measure) for m in parse_measures(["RR@10", Measure("AP")]))
    with pytest.raises(GabaritoError, match="no measure named"):
        parse_measures(" , ")
    with pytest.raises(GabaritoError, match="unknown measure 'Recall@10'"):
        parse_measures("nDCG@10,Recall@10")


def test_evaluate_keys_stay_the_names_given():
    run, qrels = {"q": ["a", "b"]}, {"q": {"b": 1}}
    by_name = metrics.evaluate(run, qrels, ["RR@10", "hit@1"])
    by_measure = metrics.evaluate(run, qrels, parse_measures("RR@10,hit@1"))
    assert by_name == by_measure == {"RR@10": {"q": 0.5}, "hit@1": {"q": 0.0}}
    assert json.dumps(by_measure) == json.dumps(by_name)


def test_ir_measures_reads_the_mapped_names_as_the_same_measures():
    ir_measures = pytest.importorskip("ir_measures")
    qrels = {"q1": {"a": 1, "c": 2}, "q2": {"b": 1}}
    run = {"q1": [("a", 0.2), ("b", 0.9), ("c", 0.5)], "q2": [("a", 3.0), ("b", 2.0)]}
    for name in NAMES:
        m = Measure(name)
        theirs = {r.query_id: r.value for r in ir_measures.iter_calc(
            [ir_measures.parse_measure(m.ir_measures_name)], qrels, {q: dict(p) for q, p in run.items()})}
        assert metrics.evaluate(run, qrels, [m])[m] == pytest.approx(theirs, abs=1e-9), name
    assert Measure("hit@5").ir_measures_name == "Success@5"
